// Server CPU per created user against per created target, in the same run (issue 31: "user creation at most 2x a
// target's CPU"). Humans are created as an outside client creates them: REST, a profile and an e-mail address, no
// password, and no mail server configured, so each asks for an initial-password mail that cannot go out. The
// server's CPU (user + system of its process, from /proc) is counted over the load and then until the server is
// idle again, so work a write leaves behind (subscriptions, the notification worker) is paid by the write.
// Alone: node --import tsx bench/user-writes.ts. BENCH_USERS (default 3000) writes of each kind, BENCH_CONNECTIONS
// (default 20); BENCH_DATABASE_URL runs the server on that PostgreSQL server (its database dropped and created
// again) instead of the embedded one; BENCH_CPU_PROF=<dir> makes the measured server write a V8 CPU profile there.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cpuSeconds } from "./cpu.js";
import autocannon from "autocannon";
import { startProcess } from "./load.js";
import { freshDatabase } from "./server.js";

const writes = Number(process.env.BENCH_USERS ?? 3000);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);

/** CPU seconds a second the server uses when nothing is asked of it (timers, polls; a profiler's own thread). */
let idleRate = 0;

/** Waits until the server used no more than when idle (2% of a core over) for a second, at most `maxSeconds`; how long it took. */
async function settle(pid: number, maxSeconds = 180): Promise<number> {
  const started = Date.now();
  let last = cpuSeconds(pid);
  while (Date.now() - started < maxSeconds * 1000) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = cpuSeconds(pid);
    if (now - last <= idleRate + 0.02) break;
    last = now;
  }
  return (Date.now() - started) / 1000;
}

/** The server's CPU a second over `seconds` with nothing asked of it. */
async function measureIdle(pid: number, seconds = 5): Promise<number> {
  const before = cpuSeconds(pid);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  return (cpuSeconds(pid) - before) / seconds;
}

export interface PerCall {
  name: string;
  done: number;
  errors: number;
  rps: number;
  /** Server CPU per call over the load alone, ms. */
  loadMs: number;
  /** Server CPU per call including what followed until it was idle, ms. */
  totalMs: number;
  /** Seconds the server stayed busy after the load. */
  afterSeconds: number;
}

/** `amount` POSTs of `body(i)` to `path` at `connections`, and the server's CPU for them. */
async function measure(pid: number, name: string, url: string, headers: Record<string, string>, amount: number, body: (i: number) => object): Promise<PerCall> {
  await settle(pid);
  process.stderr.write(`${name}: ${amount} calls\n`);
  let i = 0;
  const before = cpuSeconds(pid);
  const t0 = Date.now();
  const r = await autocannon({
    url,
    method: "POST",
    headers,
    connections,
    amount,
    requests: [{ method: "POST", setupRequest: (req) => ({ ...req, body: JSON.stringify(body(i++)) }) }],
  });
  const afterLoad = cpuSeconds(pid);
  const seconds = (Date.now() - t0) / 1000;
  const afterSeconds = await settle(pid);
  const total = cpuSeconds(pid);
  const done = r.requests.total;
  return {
    name,
    done,
    errors: r.errors + r.timeouts + r.non2xx,
    rps: done / seconds,
    loadMs: ((afterLoad - before) * 1000) / done,
    totalMs: ((total - before) * 1000) / done,
    afterSeconds,
  };
}

export async function userWritesBench(a: { url: string; pid: number; headers: Record<string, string>; amount: number }): Promise<{ lines: string[] }> {
  const run = `${process.pid}-${Date.now().toString(36)}`;
  const target = (tag: string) => (i: number) => ({ name: `bench-${tag}-${run}-${i}`, restWebhook: { url: "https://example.com/h" }, timeout: "5s" });
  const human = (tag: string) => (i: number) => ({
    username: `bench-${tag}-${run}-${i}`,
    human: { profile: { givenName: "Bench", familyName: `User ${i}` }, email: { address: `bench-${tag}-${run}-${i}@example.com` } },
  });
  idleRate = await measureIdle(a.pid);
  const targets = `${a.url}/resources/v3alpha/targets`;
  const users = `${a.url}/resources/v3alpha/users`;
  // V8 optimises a write path only after it ran thousands of times: a warm-up of each, not counted.
  const warm = Math.min(a.amount, 1000);
  await measure(a.pid, "warm-up targets", targets, a.headers, warm, target("warm"));
  await measure(a.pid, "warm-up users", users, a.headers, warm, human("warm"));
  const t = await measure(a.pid, "CreateTarget REST", targets, a.headers, a.amount, target("t"));
  const u = await measure(a.pid, "CreateUser REST, human without password", users, a.headers, a.amount, human("u"));
  const line = (m: PerCall) =>
    `${m.name.padEnd(42)} ${String(m.done).padStart(6)} calls ${String(m.errors).padStart(4)} errors ${m.rps.toFixed(0).padStart(5)}/s  ` +
    `server CPU ${m.loadMs.toFixed(3)} ms/call during the load, ${m.totalMs.toFixed(3)} ms/call until idle (${m.afterSeconds.toFixed(0)} s after)`;
  return {
    lines: [
      `server CPU when idle: ${(idleRate * 1000).toFixed(0)} ms a second (not subtracted below)`,
      line(t),
      line(u),
      `user / target server CPU per call = ${(u.totalMs / t.totalMs).toFixed(2)} until idle, ${(u.loadMs / t.loadMs).toFixed(2)} during the load (goal <= 2)`,
    ],
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-users-"));
  const databaseUrl = process.env.BENCH_DATABASE_URL ? await freshDatabase(process.env.BENCH_DATABASE_URL, "svc_bench_users") : undefined;
  const env: Record<string, string> = {
    SVC_PORT: "0",
    SVC_DATA_DIR: dataDir,
    SVC_LOG_LEVEL: "warn",
    OTEL_SDK_DISABLED: "true",
    ...(databaseUrl ? { DATABASE_URL: databaseUrl, SVC_MASTERKEY: "bench-master-key-0123456789abcde" } : {}),
  };
  // The first start creates the instance; the measured server is the second.
  const first = await startProcess(["src/main.ts"], env, /listening on (http:\/\/\S+)/);
  first.child.kill("SIGTERM");
  await new Promise((r) => first.child.once("exit", r));
  const profile = process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const server = await startProcess(["src/main.ts"], env, /listening on (http:\/\/\S+)/, profile);
  try {
    const pat = readFileSync(join(dataDir, "admin.pat"), "utf8").trim();
    const headers = { authorization: `Bearer ${pat}`, "content-type": "application/json" };
    const { lines } = await userWritesBench({ url: server.url, pid: server.child.pid!, headers, amount: writes });
    console.log(`\n${writes} writes of each kind, ${connections} connections, ${databaseUrl ? "PostgreSQL at BENCH_DATABASE_URL" : "embedded PostgreSQL"}`);
    console.log(lines.join("\n"));
  } finally {
    const exited = new Promise((r) => server.child.once("exit", r));
    server.child.kill("SIGTERM");
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}
