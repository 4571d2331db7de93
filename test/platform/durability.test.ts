import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/storage/database.js";
import { rest } from "../support/clients.js";
import { freshPostgresDatabase, TEST_MASTERKEY, testDb } from "../support/database.js";
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
    Object.assign(env, { DATABASE_URL: pgdb.url, SVC_MASTERKEY: TEST_MASTERKEY });
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
 * Writers create targets as fast as the server answers and record every ID it acknowledged (201). `crash`
 * runs once `ackedBeforeCrash` writes were acknowledged, with requests still in flight.
 */
async function writeUntilCrash(p: ServerProcess, token: string, round: number, ackedBeforeCrash: number, crash: () => void): Promise<string[]> {
  const acked: string[] = [];
  let crashed = false;
  const writer = async (w: number) => {
    for (let i = 0; !crashed; i++) {
      try {
        const res = await rest(p.url, "POST", "/resources/v3alpha/targets", {
          token,
          body: { name: `r${round}-w${w}-${i}`, restWebhook: { url: "https://example.com/hook" }, timeout: "5s" },
        });
        if (res.status === 201) acked.push(res.body.details.id);
        else throw new Error(`unexpected ${res.status}: ${JSON.stringify(res.body)}`);
      } catch (err) {
        if (!crashed) throw err;
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
      const p = track(await startServerProcess(env));
      if (round > 0) {
        // everything acknowledged before is there after the restart
        for (const id of all) expect((await rest(p.url, "GET", `/resources/v3alpha/targets/${id}`, { token: pat(dataDir) })).status, id).toBe(200);
      }
      const acked = await writeUntilCrash(p, pat(dataDir), round, 40, () => {
        if (testDb === "embedded" && kind === "everything") sigkill(-postmasterPid(dataDir)); // the postmaster's group: it and its backends
        sigkill(p.child.pid!);
      });
      expect(acked.length).toBeGreaterThanOrEqual(40);
      all.push(...acked);
    }
    const last = track(await startServerProcess(env));
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
    const first = track(await startServerProcess(env));
    // A write in flight keeps the first server in its grace period after SIGTERM.
    const body = JSON.stringify({ name: "in-flight", restWebhook: { url: "https://example.com/hook" }, timeout: "5s" });
    const socket = net.connect(first.port, "127.0.0.1");
    await new Promise((r) => socket.once("connect", r));
    let response = "";
    socket.on("data", (d) => (response += d.toString()));
    socket.write(
      `POST /resources/v3alpha/targets HTTP/1.1\r\nHost: 127.0.0.1:${first.port}\r\nAuthorization: Bearer ${pat(dataDir)}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 5)}`,
    );
    await new Promise((r) => setTimeout(r, 200));
    first.child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 300));
    const overlapping = await startOrExit(env);
    expect("code" in overlapping && overlapping.code).toBe(1);
    expect("output" in overlapping && overlapping.output).toContain(`in use by process ${first.child.pid}`);
    socket.write(body.slice(5));
    await new Promise((r) => socket.once("close", r));
    expect(response).toMatch(/^HTTP\/1\.1 201/);
    const id = /"id":"([^"]+)"/.exec(response)![1]!;
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
