import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runningEmbeddedUrl } from "../../src/command/recover.js";
import { rest } from "../support/clients.js";
import { databaseEnv, freshPostgresDatabase, TEST_MASTERKEY, testDb } from "../support/database.js";
import { killServerProcess, startOrExit, startServerProcess, type ServerProcess } from "../support/process.js";
import { connectionsToTwoWorkers, until } from "../support/machine.js";
import { TargetServer, webhookOnEvent } from "../support/targets.js";

/**
 * SVC_WORKERS=2 as an operator runs it (`npm start` on a machine with two cores): a supervisor and two worker
 * processes on one port, on the embedded database (which the supervisor owns) or on DATABASE_URL.
 */
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The worker processes under the supervisor `pid` (the embedded PostgreSQL is a child too; ps exits 1 when none). */
function childPids(pid: number): number[] {
  let out = "";
  try {
    out = execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(pid)], { encoding: "utf8" });
  } catch {
    return [];
  }
  return out
    .split("\n")
    .filter((l) => l.includes("src/main."))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}

describe("several worker processes on one port (SVC_WORKERS=2)", () => {
  let server: ServerProcess;
  let dir: string;
  let env: Record<string, string>;
  let token: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "svc-workers-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    env = { SVC_DATA_DIR: dir, SVC_WORKERS: "2", SVC_TARGET_DENY: "none", SVC_LOG_LEVEL: "info" };
    if (testDb === "postgres") {
      const pgdb = await freshPostgresDatabase();
      cleanups.push(pgdb.drop);
      Object.assign(env, databaseEnv(pgdb));
    }
    server = await startServerProcess(env, 150_000);
    cleanups.push(() => killServerProcess(server));
    token = readFileSync(join(dir, "admin.pat"), "utf8").trim();
  }, 180_000);

  it("start as one server: one ready line, one first-start line, two workers under the supervisor", async () => {
    await until("both workers", () => childPids(server.child.pid!).length === 2 || undefined);
    const out = server.output();
    expect(out.match(/svc IAM listening on/g)).toHaveLength(1);
    expect(out.match(/first start: created the first instance/g)).toHaveLength(1);
    expect(out).toContain("2 workers");
    expect((await rest(server.url, "GET", "/readyz")).status).toBe(200);
  });

  it.skipIf(testDb !== "embedded")("refuse a second start on the data directory, naming the supervisor", async () => {
    const second = await startOrExit({ ...env, SVC_WORKERS: "1" });
    expect("code" in second && second.code).toBe(1);
    expect("output" in second && second.output).toContain(`is in use by process ${server.child.pid}`);
  });

  it("read at once through one worker what was written through the other (their caches are told before the write answers)", async () => {
    const { a, b } = await connectionsToTwoWorkers(server.url, (f) => cleanups.push(f));
    // Without the NOTIFY (its sessions ended, as a database restart would) only what the writer tells the other
    // workers keeps them right; with it alone a reader on the same machine is usually, not always, fast enough.
    const db = new pg.Client({ connectionString: env.DATABASE_URL ?? runningEmbeddedUrl(dir) });
    await db.connect();
    const { rowCount } = await db.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'svc notifications'",
    );
    await db.end();
    expect(rowCount).toBeGreaterThanOrEqual(2);
    const keys = ["de", "fr", "it", "es"];
    for (let i = 0; i < 40; i++) {
      const key = keys[i % keys.length]!;
      // read first, so that the other worker has the settings cached
      expect((await rest(server.url, "GET", "/settings/v3alpha/languages", { token, agent: b.agent })).status).toBe(200);
      const set = await rest(server.url, "PATCH", "/settings/v3alpha/languages", {
        token,
        agent: a.agent,
        body: { restrictedLanguages: { languages: [{ key: "en" }, { key }] } },
      });
      expect(set.status, JSON.stringify(set.body)).toBe(200);
      const read = await rest(server.url, "GET", "/settings/v3alpha/languages", { token, agent: b.agent });
      // exactly what was written: a stale read (the list before) names other languages
      const body = read.body as { settings?: { restrictedLanguages?: { value?: { key: string }[] } } };
      expect(
        body.settings?.restrictedLanguages?.value?.map((l) => l.key),
        `round ${i}: ${JSON.stringify(read.body)}`,
      ).toEqual(["en", key]);
    }
  });

  it("call an event execution's target once per event, whichever worker wrote it", async () => {
    const receiver = await new TargetServer().start();
    cleanups.push(() => receiver.stop());
    await webhookOnEvent(server.url, token, "org.org.added", receiver.url, "once");
    const names = Array.from({ length: 10 }, (_, i) => `workers-org-${i}`);
    // a new connection each: the supervisor hands them to the workers in turn
    for (const name of names)
      expect((await rest(server.url, "POST", "/resources/v3alpha/organizations", { token, agent: false, body: { name } })).status).toBe(201);
    await receiver.waitFor(names.length, 30_000);
    await new Promise((r) => setTimeout(r, 1500));
    const delivered = receiver.received.map((r) => (r.body as { payload?: { name?: string } }).payload?.name);
    expect(delivered.sort()).toEqual([...names].sort());
  });

  it("answer /metrics for the whole machine, each series labelled with its worker", async () => {
    const text = (await rest(server.url, "GET", "/metrics")).body as string;
    expect(text).toMatch(/svc_workers\{state="running"\} 2/);
    expect(text).toMatch(/process_resident_memory_bytes\{worker="0"\}/);
    expect(text).toMatch(/process_resident_memory_bytes\{worker="1"\}/);
    // one HELP per family, however many workers
    expect(text.match(/# HELP svc_http_requests_total /g)).toHaveLength(1);
  });

  it("replace a worker killed under load while calls keep succeeding, and lose no acknowledged write", async () => {
    const [victim] = childPids(server.child.pid!);
    expect(victim).toBeDefined();
    const created: string[] = [];
    let connectionErrors = 0;
    let otherFailures = 0;
    let stop = false;
    const loop = async (n: number) => {
      for (let i = 0; !stop; i++) {
        try {
          const r = await rest(server.url, "POST", "/resources/v3alpha/organizations", {
            token,
            agent: false,
            // a connection the supervisor was handing to the worker as it died stays unanswered (node:cluster)
            timeoutMs: 10_000,
            body: { name: `load-${n}-${i}` },
          });
          if (r.status === 201) created.push(r.body.details.id);
          else otherFailures++;
        } catch {
          // a call in flight on the killed worker loses its connection: it was never answered
          connectionErrors++;
        }
      }
    };
    const loops = [0, 1, 2, 3].map(loop);
    await new Promise((r) => setTimeout(r, 1000));
    process.kill(victim!, "SIGKILL");
    const replaced = await until("a new worker in its place", () => {
      const now = childPids(server.child.pid!);
      return now.length === 2 && !now.includes(victim!) ? now : undefined;
    });
    // calls go on succeeding after the replacement (however slow a loaded machine makes them)
    const atReplacement = created.length;
    await until("calls succeeding after the replacement", () => (created.length >= atReplacement + 10 ? true : undefined), 60_000);
    stop = true;
    await Promise.all(loops);
    expect(replaced).toHaveLength(2);
    expect(otherFailures).toBe(0);
    expect(connectionErrors).toBeLessThanOrEqual(4);
    for (const id of created) expect((await rest(server.url, "GET", `/resources/v3alpha/organizations/${id}`, { token, agent: false })).status).toBe(200);
    const metrics = (await rest(server.url, "GET", "/metrics", { agent: false })).body as string;
    expect(metrics).toMatch(/svc_worker_restarts_total 1/);
    expect(server.output()).toMatch(/worker \d exited \(SIGKILL\): starting another/);
  }, 180_000);

  it("drain every worker on SIGTERM: the calls in flight answer, then all processes and the database stop", async () => {
    const workers = childPids(server.child.pid!);
    const inFlight = Array.from({ length: 10 }, (_, i) =>
      rest(server.url, "POST", "/resources/v3alpha/organizations", { token, agent: false, body: { name: `draining-${i}` } }),
    );
    await new Promise((r) => setTimeout(r, 20));
    server.child.kill("SIGTERM");
    const answers = await Promise.allSettled(inFlight);
    expect(await server.exited, server.output().slice(-3000)).toBe(0);
    // each either answered or was refused before it reached a worker: none cut off in the middle
    for (const a of answers) if (a.status === "fulfilled") expect(a.value.status).toBe(201);
    for (const pid of workers) expect(() => process.kill(pid, 0)).toThrow();
    expect(server.output()).toContain("stopped");
    // signalled while its workers start (one answers on the port before the supervisor's ready line): the
    // supervisor stops them and the database, exit 0, nothing left behind
    const early = await startOrExit({ ...env, SVC_LOG_LEVEL: "info" }, 150_000, /Server listening at (http:\/\/\S+:(\d+))/);
    if (!("server" in early)) throw new Error(`exited with ${early.code} before a worker listened:\n${early.output}`);
    const starting = childPids(early.server.child.pid!);
    early.server.child.kill("SIGTERM");
    expect(await early.server.exited, early.server.output().slice(-3000)).toBe(0);
    for (const pid of starting) expect(() => process.kill(pid, 0)).toThrow();
    // the next start is clean (the data directory's lock was given up)
    const next = await startServerProcess({ ...env, SVC_WORKERS: "1" }, 150_000);
    cleanups.push(async () => {
      next.child.kill("SIGKILL");
      await next.exited;
    });
    expect((await rest(next.url, "GET", "/readyz")).status).toBe(200);
  }, 240_000);
});

describe("a worker that cannot start (SVC_WORKERS=2)", () => {
  it("stops the whole start with that worker's one line and exit code 1", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-workers-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    // nothing listens on port 1: every worker fails to reach the database
    const r = await startOrExit({ SVC_WORKERS: "2", SVC_DATA_DIR: dir, DATABASE_URL: "postgres://postgres@127.0.0.1:1/none", SVC_MASTERKEY: TEST_MASTERKEY });
    expect("code" in r && r.code).toBe(1);
    const output = "output" in r ? r.output : "";
    const lines = output.split("\n").filter((l) => l.startsWith("cannot start"));
    expect(lines, output).toHaveLength(1);
    expect(lines[0]).toMatch(/^cannot start: DATABASE_URL postgres:\/\/postgres@127\.0\.0\.1:1\/none: /);
    expect(output).not.toContain("listening on");
  });
});

// The supervisor's own logic, the same on either database: run once.
describe.runIf(testDb === "embedded")("workers that keep dying (SVC_WORKERS=2)", () => {
  it("are replaced with a back-off, those dying while they start too, until more than 5 exit within a minute: then all stops, exit 1", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-workers-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const server = await startServerProcess({ SVC_WORKERS: "2", SVC_DATA_DIR: dir, SVC_LOG_LEVEL: "info" }, 150_000);
    cleanups.push(() => killServerProcess(server));
    // every worker the supervisor forks, the replacements as soon as they appear (still starting), until it gives up
    const killed = new Set<number>();
    const until = Date.now() + 90_000;
    while (server.child.exitCode === null && Date.now() < until) {
      for (const pid of childPids(server.child.pid!)) {
        if (killed.has(pid)) continue;
        killed.add(pid);
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // gone already
        }
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(server.child.exitCode, `still running after 90 s:\n${server.output().slice(-3000)}`).not.toBeNull();
    expect(await server.exited, server.output().slice(-3000)).toBe(1);
    expect(server.output()).toMatch(/6 workers exited within a minute: stopping/);
    expect(killed.size).toBeGreaterThanOrEqual(6);
    for (const pid of killed) expect(() => process.kill(pid, 0)).toThrow();
    // and the embedded PostgreSQL was stopped, not left running without its owner
    expect(existsSync(join(dir, "pg", "postmaster.pid"))).toBe(false);
  }, 180_000);
});
