import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/storage/database.js";
import { rest } from "../support/clients.js";
import { requestInFlight } from "../support/in-flight.js";
import { databaseEnv, freshPostgresDatabase, testDb } from "../support/database.js";
import { startOrExit, startServerProcess, type ServerProcess } from "../support/process.js";

// Each test gets its own data directory (and PostgreSQL database when the suite runs on one).
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function storage(): Promise<{ dataDir: string; env: Record<string, string> }> {
  const dataDir = mkdtempSync(join(tmpdir(), "svc-durable-"));
  const env: Record<string, string> = { SVC_DATA_DIR: dataDir };
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  if (testDb === "postgres") {
    const pgdb = await freshPostgresDatabase();
    Object.assign(env, databaseEnv(pgdb));
    cleanups.push(pgdb.drop);
  }
  return { dataDir, env };
}

/** Stops a server for good at the end of a test, whatever state it is in. */
function track(p: ServerProcess): ServerProcess {
  cleanups.push(async () => {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill("SIGTERM");
      await p.exited;
    }
  });
  return p;
}

const pat = (dataDir: string) => readFileSync(join(dataDir, "admin.pat"), "utf8").trim();
const postmasterPid = (dataDir: string) => Number(readFileSync(join(dataDir, "pg", "postmaster.pid"), "utf8").split("\n")[0]);

/**
 * Eight writers call `write` as fast as the server answers and record what each acknowledged write returned.
 * `crash` runs once `ackedBeforeCrash` writes were acknowledged, with requests still in flight.
 */
async function writeUntilCrash<T>(p: ServerProcess, ackedBeforeCrash: number, write: (w: number, i: number) => Promise<T>, crash: () => void): Promise<T[]> {
  const acked: T[] = [];
  let crashed = false;
  const writer = async (w: number) => {
    for (let i = 0; !crashed; i++) {
      try {
        acked.push(await write(w, i));
      } catch (err) {
        // before the crash a failed write is the server's fault: its output says why (it may have died)
        if (!crashed) throw new Error(`write ${w}/${i} failed before the crash: ${(err as Error).message}\n${p.output().slice(-3000)}`);
      }
      if (!crashed && acked.length >= ackedBeforeCrash) {
        crashed = true;
        crash();
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, (_, w) => writer(w)));
  await p.exited;
  return acked;
}

/** A target created, by its ID; throws unless the server acknowledged it (201). */
async function createTarget(p: ServerProcess, token: string, name: string): Promise<string> {
  const res = await rest(p.url, "POST", "/resources/v3alpha/targets", {
    token,
    body: { name, restWebhook: { url: "https://example.com/hook" }, timeout: "5s" },
  });
  if (res.status !== 201) throw new Error(`unexpected ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.details.id;
}

/** A start after a crash; if it fails, the error says which and ends with the embedded PostgreSQL's log. */
async function startAfterCrash(dataDir: string, env: Record<string, string>, which: string): Promise<ServerProcess> {
  try {
    return await startServerProcess(env);
  } catch (e) {
    let log = "";
    try {
      log = readFileSync(join(dataDir, "postgres.log"), "utf8").slice(-3000);
    } catch {
      // no embedded database, or no log yet
    }
    throw new Error(`${which}: ${(e as Error).message}${log ? `\n--- postgres.log (end) ---\n${log}` : ""}`);
  }
}

/** Kills the server, and on the embedded database its PostgreSQL too (the postmaster's group: it and its backends). */
function killEverything(dataDir: string, p: ServerProcess): void {
  if (testDb === "embedded") sigkill(-postmasterPid(dataDir));
  sigkill(p.child.pid!);
}

function sigkill(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // gone already
  }
}

describe("durability: an acknowledged write survives kill -9", () => {
  it("keeps every acknowledged write across crashes of the server (and of the embedded PostgreSQL), and events agree with projections", async () => {
    const { dataDir, env } = await storage();
    const all: string[] = [];
    // Round 1 kills everything at once (as a power cut would, minus the disk); round 2 kills only the node
    // process, leaving an orphaned postmaster for the next start to adopt; round 3 again kills everything.
    const kinds = ["everything", "server only", "everything"] as const;
    for (const [round, kind] of kinds.entries()) {
      const p = track(await startAfterCrash(dataDir, env, `round ${round}, after the previous round killed ${kinds[round - 1] ?? "nothing"}`));
      if (round > 0) {
        // everything acknowledged before is there after the restart
        for (const id of all) expect((await rest(p.url, "GET", `/resources/v3alpha/targets/${id}`, { token: pat(dataDir) })).status, id).toBe(200);
      }
      const token = pat(dataDir);
      const acked = await writeUntilCrash(
        p,
        40,
        (w, i) => createTarget(p, token, `r${round}-w${w}-${i}`),
        () => (kind === "everything" ? killEverything(dataDir, p) : sigkill(p.child.pid!)),
      );
      expect(acked.length).toBeGreaterThanOrEqual(40);
      all.push(...acked);
    }
    const last = track(await startAfterCrash(dataDir, env, "the check after round 2"));
    const found = await rest(last.url, "POST", "/resources/v3alpha/targets/_search", {
      token: pat(dataDir),
      body: { filters: [{ inIds: { ids: all } }], query: { limit: 1000 } },
    });
    expect(found.status).toBe(200);
    expect(found.body.result.length).toBe(all.length);
    last.child.kill("SIGTERM");
    expect(await last.exited).toBe(0);

    const db = await openDatabase({ databaseUrl: env.DATABASE_URL, dataDir });
    try {
      // Every target event has its projection row at its sequence, and no row lacks its events.
      const disagree = await db.prisma.$queryRawUnsafe<{ n: bigint }[]>(`
        SELECT count(*) AS n FROM (
          SELECT e.aggregate_id, max(e.sequence) AS seq FROM events e
           WHERE e.aggregate_type = 'target' GROUP BY e.aggregate_id
        ) ev FULL JOIN targets t ON t.id = ev.aggregate_id
        WHERE t.id IS NULL OR ev.aggregate_id IS NULL OR t.sequence <> ev.seq`);
      expect(Number(disagree[0]!.n)).toBe(0);
      const rows = await db.prisma.target.count({ where: { id: { in: all } } });
      expect(rows).toBe(all.length);
    } finally {
      await db.close();
    }
  }, 240_000);

  it("keeps every acknowledged settings write of a group commit: none is answered before its batch commits", async () => {
    const { dataDir, env } = await storage();
    const p = track(await startServerProcess(env));
    const token = pat(dataDir);
    // Writers to one settings aggregate queue behind its lock and are committed together (src/command/batches.ts).
    const languages = ["de", "fr", "it", "en"];
    const acked = await writeUntilCrash(
      p,
      60,
      async (w, i) => {
        const body = { defaultLanguage: { key: languages[(w + i) % languages.length] } };
        const res = await rest(p.url, "PATCH", "/settings/v3alpha/languages", { token, body });
        if (res.status !== 200) throw new Error(`unexpected ${res.status}: ${JSON.stringify(res.body)}`);
        return { sequence: Number(res.body.details.sequence), language: body.defaultLanguage.key };
      },
      () => killEverything(dataDir, p),
    );
    const last = track(await startServerProcess(env));
    last.child.kill("SIGTERM");
    expect(await last.exited).toBe(0);

    const db = await openDatabase({ databaseUrl: env.DATABASE_URL, dataDir });
    try {
      const events = await db.prisma.event.findMany({
        where: { aggregateType: "settings", aggregateId: { startsWith: "language/instance/" } },
        orderBy: { sequence: "asc" },
      });
      // Every sequence a write was answered with is in the log: the batch committed before anyone was answered.
      const stored = new Set(events.map((e) => e.sequence));
      const highest = Math.max(...acked.map((a) => a.sequence));
      expect(highest).toBeGreaterThan(0);
      for (const a of acked) if (a.sequence > 0) expect(stored.has(a.sequence), `sequence ${a.sequence}`).toBe(true);
      // The projection is at the log's last event, whatever was in flight at the crash.
      const row = await db.prisma.setting.findFirst({ where: { kind: "language", ownerType: "instance" } });
      expect(row?.sequence).toBe(events.at(-1)!.sequence);
      expect((row?.values as { default_language?: string } | undefined)?.default_language).toBe(
        (events.at(-1)!.payload as { set: { default_language?: string } }).set.default_language,
      );
    } finally {
      await db.close();
    }
  }, 120_000);
});

describe.runIf(testDb === "embedded")("one process per embedded data directory", () => {
  it("refuses a second server on the same data directory, naming the first's PID", async () => {
    const { env } = await storage();
    const first = track(await startServerProcess(env));
    const second = await startOrExit(env);
    expect("code" in second && second.code).toBe(1);
    const output = "output" in second ? second.output : "";
    expect(output.trim().split("\n")).toHaveLength(1);
    expect(output).toContain(`in use by process ${first.child.pid}`);
    // the first one is unaffected
    expect((await fetch(`${first.url}/readyz`)).status).toBe(200);
  });

  it("refuses a start while the previous server is still finishing its calls after SIGTERM, and loses nothing", async () => {
    const { dataDir, env } = await storage();
    // The call stays in flight while a second server starts and is refused: seconds on a loaded machine, and
    // past the default 10 s grace it would be cut off. The first server exits as soon as the call is done.
    const first = track(await startServerProcess({ ...env, SVC_SHUTDOWN_GRACE_MS: "120000" }));
    // A write in flight keeps the first server in its grace period after SIGTERM.
    const body = JSON.stringify({ name: "in-flight", restWebhook: { url: "https://example.com/hook" }, timeout: "5s" });
    const call = await requestInFlight(
      first.port,
      `POST /resources/v3alpha/targets HTTP/1.1\r\nHost: 127.0.0.1:${first.port}\r\nAuthorization: Bearer ${pat(dataDir)}\r\nContent-Type: application/json\r\n`,
      body,
      5,
    );
    first.child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 300));
    const overlapping = await startOrExit(env);
    expect("code" in overlapping && overlapping.code).toBe(1);
    expect("output" in overlapping && overlapping.output).toContain(`in use by process ${first.child.pid}`);
    call.finish();
    await call.closed;
    expect(call.response).toMatch(/^HTTP\/1\.1 201/);
    const id = /"id":"([^"]+)"/.exec(call.response)![1]!;
    expect(await first.exited).toBe(0);

    const next = track(await startServerProcess(env));
    expect((await rest(next.url, "GET", `/resources/v3alpha/targets/${id}`, { token: pat(dataDir) })).status).toBe(200);
  });

  it("lets exactly one of two servers started together on an empty data directory serve it", async () => {
    const { env } = await storage();
    const [a, b] = await Promise.all([startOrExit(env), startOrExit(env)]);
    const up = [a, b].filter((s) => "server" in s);
    const refused = [a, b].filter((s) => "code" in s);
    expect(up).toHaveLength(1);
    expect(refused).toHaveLength(1);
    const server = track((up[0] as { server: ServerProcess }).server);
    expect((refused[0] as { output: string }).output).toContain(`in use by process ${server.child.pid}`);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });
});
