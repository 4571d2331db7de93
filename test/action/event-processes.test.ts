import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { databaseEnv, freshPostgresDatabase } from "../support/database.js";
import { startServerProcess, type ServerProcess } from "../support/process.js";
import { TargetServer, webhookOnEvent } from "../support/targets.js";

// Several processes on one database need PostgreSQL (the embedded one belongs to one process).
const onPostgres = !!process.env.TEST_DATABASE_URL;

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function kill(p: ServerProcess) {
  if (p.child.exitCode === null && p.child.signalCode === null) {
    p.child.kill("SIGKILL");
    await p.exited;
  }
}

/**
 * Several server processes on one database are the supported way to scale out: an event execution's targets are
 * called once per event whichever process wrote it, and when the process delivering dies another takes over.
 */
describe.skipIf(!onPostgres)("event executions with several processes on one database", () => {
  it("call each target once per event, and go on after the delivering process is killed", async () => {
    const pgdb = await freshPostgresDatabase();
    cleanups.push(pgdb.drop);
    const dirs = [0, 1].map(() => mkdtempSync(join(tmpdir(), "svc-events-")));
    for (const d of dirs) cleanups.push(() => rmSync(d, { recursive: true, force: true }));
    const env = (i: number) => ({ ...databaseEnv(pgdb), SVC_DATA_DIR: dirs[i]!, SVC_TARGET_DENY: "none" });
    const first = await startServerProcess(env(0));
    cleanups.push(() => kill(first));
    const second = await startServerProcess(env(1));
    cleanups.push(() => kill(second));
    const token = readFileSync(join(dirs[0]!, "admin.pat"), "utf8").trim();
    const receiver = await new TargetServer().start();
    cleanups.push(() => receiver.stop());
    await webhookOnEvent(first.url, token, "org.org.added", receiver.url, "t");
    // organisations made through both processes
    const names: string[] = [];
    for (let i = 0; i < 6; i++) {
      const name = `org-${i}`;
      names.push(name);
      const via = i % 2 ? second : first;
      expect((await rest(via.url, "POST", "/resources/v3alpha/organizations", { token, body: { name } })).status).toBe(201);
    }
    await receiver.waitFor(names.length, 30_000);
    // the cursor is stored after the calls: a kill before that repeats them (at least once), not what this tests
    await new Promise((r) => setTimeout(r, 1500));
    // whoever delivers is killed: the other takes over once its lease (10 s) runs out
    await kill(first);
    await kill(second);
    const third = await startServerProcess(env(0));
    cleanups.push(() => kill(third));
    expect((await rest(third.url, "POST", "/resources/v3alpha/organizations", { token, body: { name: "org-after" } })).status).toBe(201);
    names.push("org-after");
    await receiver.waitFor(names.length, 40_000);
    await new Promise((r) => setTimeout(r, 1500));
    const delivered = receiver.received.map((r) => (r.body as { payload?: { name?: string } }).payload?.name);
    expect(delivered.sort(), JSON.stringify(delivered)).toEqual([...names].sort());
  }, 120_000);
});
