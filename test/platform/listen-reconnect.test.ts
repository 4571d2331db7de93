import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENTS_CHANNEL } from "../../src/eventstore/eventstore.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * The LISTEN connection through which a process hears other processes' commits (and drops what it cached of
 * them) breaks when the database restarts, fails over, or a proxy cuts it. It must come back by itself, and what
 * was sent while it was down must not leave a stale entry behind (issue 32, point 2). Here its backend is
 * terminated as a restart would end it, and "another process" writes straight to the table.
 */
let t: TestServer;
let admin: pg.Client;

beforeAll(async () => {
  t = await startTestServer();
  admin = new pg.Client(t.server.db.connection);
  await admin.connect();
});
afterAll(async () => {
  await admin?.end();
  await t?.close();
});

const languages = (method: "GET" | "PATCH", body?: object) =>
  rest(t.url, method, "/settings/v3alpha/languages", { token: t.adminPat, ...(body ? { body } : {}) });
const defaultLanguage = async () => {
  const r = await languages("GET");
  expect(r.status).toBe(200);
  return (r.body as { settings: { defaultLanguage: { value: string } } }).settings.defaultLanguage.value;
};
/** Another process's write: the projection row changed behind this process's back (and announced, when `notify`). */
async function writeBehind(language: string, notify: boolean): Promise<void> {
  await admin.query(
    `UPDATE settings SET values = jsonb_set(values, '{default_language}', to_jsonb($1::text)) WHERE instance_id = $2 AND values ? 'default_language'`,
    [language, t.instanceId],
  );
  if (notify) await admin.query("SELECT pg_notify($1, $2)", [EVENTS_CHANNEL, "anything changed"]);
}
/** The backends listening for this database's events, besides the admin client. */
const listeners = async () =>
  (
    await admin.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = 'svc notifications'",
    )
  ).rows.map((r) => r.pid);

async function until<T>(what: string, f: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("the LISTEN connection", () => {
  it("comes back after its session is ended, and nothing cached while it was gone is served stale", async () => {
    expect((await languages("PATCH", { defaultLanguage: { key: "de" } })).status).toBe(200);
    expect(await defaultLanguage()).toBe("de");
    // Heard while listening: another process's write and its NOTIFY.
    await writeBehind("fr", true);
    await until("the NOTIFY's invalidation", async () => ((await defaultLanguage()) === "fr" ? true : undefined));

    const [before] = await listeners();
    expect(before).toBeDefined();
    await admin.query("SELECT pg_terminate_backend($1)", [before]);
    // Cached now, while no one listens; then changed behind its back, announced to no one who hears.
    expect(await defaultLanguage()).toBe("fr");
    await writeBehind("it", true);
    const [after] = await until("a new LISTEN session", async () => {
      const now = await listeners();
      return now.length && !now.includes(before!) ? now : undefined;
    });
    expect(after).not.toBe(before);
    // Listening again: the entry cached in the gap was dropped, and what was missed is read.
    expect(await defaultLanguage()).toBe("it");
    // And the new session hears what comes next.
    await writeBehind("es", true);
    await until("the NOTIFY's invalidation after the reconnect", async () => ((await defaultLanguage()) === "es" ? true : undefined));
  });
});
