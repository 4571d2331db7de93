// The measured server of a bench run, started the same way for `npm run bench` (bench/run.ts) and the goals
// (bench/goals.ts): a fresh database (a new embedded data directory, or BENCH_DATABASE_URL's database dropped
// and created again), a first start that creates the instance, the seed (bench/seed.ts), then the server with
// an explicit SVC_WORKERS, and beside it the ceiling (a bare Fastify route returning the same JSON).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { startProcess } from "./load.js";

/** SVC_WORKERS of the measured server: BENCH_WORKERS (default 1, the single process). */
export function benchWorkers(): number {
  const n = Number(process.env.BENCH_WORKERS ?? 1);
  if (!Number.isInteger(n) || n < 1) throw new Error(`BENCH_WORKERS must be one whole number >= 1 here, not ${process.env.BENCH_WORKERS}`);
  return n;
}

export interface BenchServerOptions {
  workers: number;
  /** BENCH_DATABASE_URL: a PostgreSQL server (its database is dropped and created again); else the embedded one. */
  databaseUrl?: string | undefined;
  /** Targets seeded (SEED_TARGETS, default 10,000). */
  targets?: number;
  /** Users seeded (BENCH_USERS, or SEED_USERS; default 100,000). */
  users?: number;
  /** Node options of the measured server (a CPU profile). */
  nodeArgs?: string[];
}

export interface BenchServer {
  url: string;
  /** The server's PID: the supervisor when workers >= 2 (bench/cpu.ts counts its workers with it). */
  pid: number;
  pat: string;
  /** An organisation of the seed. */
  firstOrg: string;
  workers: number;
  targets: number;
  users: number;
  /** The database the server runs on when it is not the embedded one (pgbench runs there). */
  databaseUrl: string | undefined;
  /** The bare Fastify route returning ResolveLanguages' JSON (GET /settings/v3alpha/languages), a JWT-signing route and a webhook. */
  ceiling: { url: string; pid: number };
  /** The environment the server runs with (SVC_*), for servers of its own a bench starts beside. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** Drops and creates the database of `url` (`fallbackName` when it names none), so that every run starts from nothing. */
export async function freshDatabase(url: string, fallbackName = "svc_bench"): Promise<string> {
  const target = new URL(url);
  const name = target.pathname.slice(1) || fallbackName;
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const c = new pg.Client({ connectionString: admin.toString() });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  await c.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  await c.end();
  target.pathname = `/${name}`;
  return target.toString();
}

/** Waits for a child to exit after SIGTERM (the supervisor drains its workers and stops the embedded PostgreSQL first). */
async function terminate(child: import("node:child_process").ChildProcess, ms = 30_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await Promise.race([exited, new Promise((r) => setTimeout(r, ms).unref())]);
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
}

export async function startBenchServer(o: BenchServerOptions): Promise<BenchServer> {
  const targets = o.targets ?? Number(process.env.SEED_TARGETS ?? 10_000);
  const users = o.users ?? Number(process.env.BENCH_USERS ?? process.env.SEED_USERS ?? 100_000);
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-"));
  const databaseUrl = o.databaseUrl ? await freshDatabase(o.databaseUrl) : undefined;
  const env: Record<string, string> = {
    SVC_PORT: "0",
    SVC_DATA_DIR: dataDir,
    SVC_LOG_LEVEL: "warn",
    SVC_WORKERS: String(o.workers),
    // The limits as a deployment runs them by default: failures counted (the load makes none, so its cost is the
    // check on every guessable request), the request limits off.
    // The webhook of the actions section answers on loopback, which the default of SVC_TARGET_DENY denies.
    SVC_TARGET_DENY: "none",
    ...(databaseUrl ? { DATABASE_URL: databaseUrl, SVC_MASTERKEY: "bench-master-key-0123456789abcde" } : {}),
  };
  const listening = /listening on (http:\/\/\S+)/;
  // First start creates the instance (a single process: the seed must not race workers); then the seed; then the measured server.
  const first = await startProcess(["src/main.ts"], { ...env, SVC_WORKERS: "1" }, listening);
  await terminate(first.child);
  const seeded = spawnSync(process.execPath, ["--import", "tsx", "bench/seed.ts"], {
    env: { ...process.env, ...env, SEED_TARGETS: String(targets), SEED_USERS: String(users) },
    encoding: "utf8",
  });
  if (seeded.status !== 0) throw new Error(`seeding failed: ${seeded.stderr}`);
  const firstOrg = /first org (\d+)/.exec(seeded.stdout)![1]!;

  const server = await startProcess(["src/main.ts"], env, listening, o.nodeArgs);
  const pat = readFileSync(join(dataDir, "admin.pat"), "utf8").trim();
  let ceiling: Awaited<ReturnType<typeof startProcess>> | undefined;
  try {
    const sample = await (await fetch(`${server.url}/settings/v3alpha/languages`, { headers: { authorization: `Bearer ${pat}` } })).text();
    ceiling = await startProcess(["bench/ceiling.ts"], { CEILING_BODY: sample }, listening);
  } catch (err) {
    await terminate(server.child);
    throw err;
  }
  const c = ceiling;
  return {
    url: server.url,
    pid: server.child.pid!,
    pat,
    firstOrg,
    workers: o.workers,
    targets,
    users,
    databaseUrl,
    ceiling: { url: c.url, pid: c.child.pid! },
    env,
    stop: async () => {
      await Promise.all([terminate(server.child), terminate(c.child)]);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
