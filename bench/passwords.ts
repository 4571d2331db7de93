// Password verification with the default hash, in this process: the deliberate cost of a login. scrypt runs on
// libuv's thread pool (UV_THREADPOOL_SIZE, default 4), so verifications run that many at a time.
import { hashPassword, verifyPassword } from "../src/crypto/password.js";
import { percentile } from "./load.js";

export async function passwordBench(seconds: number) {
  const hash = await hashPassword("Bench!password1");
  const concurrency = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
  const latencies: number[] = [];
  const end = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < end) {
        const t0 = performance.now();
        const { valid } = await verifyPassword("Bench!password1", hash);
        if (!valid) throw new Error("the bench password did not verify");
        latencies.push(performance.now() - t0);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return {
    name: `verify password, scrypt N=2^15 r=8 p=1 (${concurrency} at a time)`,
    rps: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors: 0,
  };
}
