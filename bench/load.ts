import { spawn, type ChildProcess } from "node:child_process";
import * as grpc from "@grpc/grpc-js";
import autocannon from "autocannon";

export interface Result {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** Requests completed (HTTP loads). */
  requests?: number;
}

export async function httpLoad(name: string, opts: autocannon.Options): Promise<Result> {
  const r = await autocannon({ connections: 50, duration: 10, ...opts });
  const errors = r.errors + r.timeouts + r.non2xx;
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors, requests: r.requests.total };
}

export function percentile(sorted: number[], p: number) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : 0;
}

/** 50 concurrent unary calls over one HTTP/2 connection for `seconds`, as gRPC clients do. */
export async function grpcLoad(name: string, target: string, path: string, makeRequest: (i: number) => Buffer, token: string, seconds = 10): Promise<Result> {
  const client = new grpc.Client(target, grpc.credentials.createInsecure());
  const md = new grpc.Metadata();
  md.set("authorization", `Bearer ${token}`);
  const latencies: number[] = [];
  let errors = 0;
  let i = 0;
  const end = Date.now() + seconds * 1000;
  const worker = async () => {
    while (Date.now() < end) {
      const t0 = performance.now();
      await new Promise<void>((resolve) =>
        client.makeUnaryRequest(
          path,
          (b: Buffer) => b,
          (b: Buffer) => b,
          makeRequest(i++),
          md,
          (err) => {
            if (err) errors++;
            else latencies.push(performance.now() - t0);
            resolve();
          },
        ),
      );
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: Number(process.env.GRPC_CONC ?? 50) }, worker));
  const elapsed = (Date.now() - started) / 1000;
  client.close();
  latencies.sort((a, b) => a - b);
  return { name, rps: latencies.length / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors };
}

/** Starts a process and resolves with the URL it prints (and everything it printed up to then). */
export function startProcess(
  args: string[],
  env: Record<string, string>,
  pattern: RegExp,
  nodeArgs: string[] = [],
): Promise<{ child: ChildProcess; url: string; output: string }> {
  const child = spawn(process.execPath, [...nodeArgs, "--import", "tsx", ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d) => {
      out += d;
      const m = pattern.exec(out);
      if (m) resolve({ child, url: m[1]!.replace("localhost", "127.0.0.1"), output: out });
    });
    child.on("exit", (code) => reject(new Error(`${args.join(" ")} exited with ${code}: ${out}`)));
  });
}
