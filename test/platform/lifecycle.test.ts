import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/storage/database.js";
import { rest } from "../support/clients.js";
import { requestInFlight } from "../support/in-flight.js";
import { databaseEnv, freshPostgresDatabase, testDb } from "../support/database.js";
import { serverArgs, startServerProcess } from "../support/process.js";

let dataDir: string;
let env: Record<string, string>;
let dropDb: (() => Promise<void>) | undefined;
/** DATABASE_URL and what goes with it, on PostgreSQL. */
let databaseVariables: Record<string, string> = {};

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "svc-life-"));
  env = { SVC_DATA_DIR: dataDir };
  if (testDb === "postgres") {
    const pgdb = await freshPostgresDatabase();
    databaseVariables = databaseEnv(pgdb);
    Object.assign(env, databaseVariables);
    dropDb = pgdb.drop;
  }
});
afterAll(async () => {
  rmSync(dataDir, { recursive: true, force: true });
  await dropDb?.();
});

/** Events and instances in the server's database, read while no server runs. */
async function counts() {
  const db = await openDatabase({ databaseUrl: env.DATABASE_URL, dataDir });
  try {
    return { events: await db.prisma.event.count(), instances: await db.prisma.instance.count() };
  } finally {
    await db.close();
  }
}

describe("the server process", () => {
  it("creates the first instance on first start, changes nothing on the second, and keeps every change", async () => {
    const first = await startServerProcess(env);
    expect(first.output()).toMatch(/first start: created the first instance/);
    const patPath = join(dataDir, "admin.pat");
    const pat = readFileSync(patPath, "utf8").trim();
    expect(statSync(patPath).mode & 0o777).toBe(0o600);
    const set = await rest(first.url, "PATCH", "/settings/v3alpha/languages", { token: pat, body: { defaultLanguage: { key: "ja" } } });
    expect(set.status).toBe(200);
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    const before = await counts();
    expect(before.instances).toBe(1);

    const second = await startServerProcess(env);
    try {
      expect(second.output()).not.toMatch(/first start/);
      expect(readFileSync(patPath, "utf8").trim()).toBe(pat);
      const got = await rest(second.url, "GET", "/settings/v3alpha/languages", { token: pat });
      expect(got.body.settings.defaultLanguage.value).toBe("ja");
    } finally {
      second.child.kill("SIGTERM");
      expect(await second.exited).toBe(0);
    }
    expect(await counts()).toEqual(before);
  });

  it("applies migrations with `npm run migrate` and exits", async () => {
    const { spawnSync } = await import("node:child_process");
    const dir = mkdtempSync(join(tmpdir(), "svc-migrate-"));
    try {
      const run = () =>
        spawnSync(process.execPath, serverArgs("migrate"), {
          cwd: join(import.meta.dirname, "..", ".."),
          env: { ...process.env, SVC_DATA_DIR: dir, ...databaseVariables },
          encoding: "utf8",
          timeout: 50_000,
        });
      const first = run();
      expect(first.status).toBe(0);
      // the lifecycle database was migrated by the server already; a fresh embedded data directory is not
      if (!env.DATABASE_URL) expect(first.stdout).toMatch(/applied .*_init/);
      const second = run();
      expect(second.status).toBe(0);
      expect(second.stdout).toContain("the database is up to date");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("on SIGTERM stops accepting, finishes the call in flight, closes its connection once answered, and exits 0", async () => {
    // A grace period longer than the test: the server must not wait for it once nothing is in flight.
    const p = await startServerProcess({ ...env, SVC_SHUTDOWN_GRACE_MS: "120000" });
    const pat = readFileSync(join(dataDir, "admin.pat"), "utf8").trim();
    const body = JSON.stringify({ defaultLanguage: { key: "ru" } });
    // The request is in flight: headers and half the body are sent when the signal arrives.
    const call = await requestInFlight(
      p.port,
      `PATCH /settings/v3alpha/languages HTTP/1.1\r\nHost: 127.0.0.1:${p.port}\r\nAuthorization: Bearer ${pat}\r\nContent-Type: application/json\r\n`,
      body,
      10,
    );
    p.child.kill("SIGTERM");
    // no new connections once shutting down (the listener closes moments after the signal)
    const connects = () =>
      new Promise<boolean>((resolve) => {
        const c = net.connect(p.port, "127.0.0.1");
        c.once("connect", () => {
          c.destroy();
          resolve(true);
        });
        c.once("error", () => resolve(false));
      });
    const deadline = Date.now() + 10_000;
    let refused = false;
    while (!refused && Date.now() < deadline) {
      refused = !(await connects());
      if (!refused) await new Promise((r) => setTimeout(r, 50));
    }
    expect(refused).toBe(true);
    call.finish();
    await call.closed;
    // The keep-alive connection is closed as soon as it is idle, not at the end of the grace period.
    expect(Date.now() - call.answeredAt).toBeLessThan(5000);
    expect(call.response).toMatch(/^HTTP\/1\.1 200/);
    expect(call.response).toContain('"details"');
    expect(await p.exited).toBe(0);
  });
});
