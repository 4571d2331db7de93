import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/storage/database.js";
import { rest } from "../support/clients.js";
import { TEST_MASTERKEY } from "../support/database.js";
import { until } from "../support/machine.js";
import { ownPostgresRunsHere, type PrivatePostgres, startPrivatePostgres } from "../support/private-postgres.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.js";

/**
 * A database that does not answer in time. The database's network goes dark (issue 32, point 2: "never a hang"): packets are dropped, nothing is refused or
 * reset, as when a host vanishes or a firewall drops them. Calls are answered UNAVAILABLE once
 * SVC_DATABASE_QUERY_TIMEOUT_MS or SVC_DATABASE_CONNECT_TIMEOUT_MS passes, the LISTEN connection is given up by its
 * heartbeat (`/readyz` says so), and when the network is back everything works again with nothing acknowledged
 * lost. And a write that waits for a lock past the limit is cancelled on the server too, holding nothing after the
 * call gave up. Its own PostgreSQL behind a proxy.
 */
let postgres: PrivatePostgres;
let proxy: TcpProxy;
let t: TestServer;

beforeAll(async () => {
  if (!ownPostgresRunsHere) return;
  postgres = await startPrivatePostgres();
  proxy = await startTcpProxy(postgres.port);
  t = await startTestServer({
    DATABASE_URL: `postgres://postgres@127.0.0.1:${proxy.port}/postgres`,
    SVC_MASTERKEY: TEST_MASTERKEY,
    SVC_DATABASE_CONNECT_TIMEOUT_MS: "1000",
    SVC_DATABASE_QUERY_TIMEOUT_MS: "2000",
  });
}, 60_000);
afterAll(async () => {
  await t?.close().catch(() => {});
  await proxy?.close();
  postgres?.remove();
});

const createOrg = (name: string) => rest(t.url, "POST", "/resources/v3alpha/organizations", { token: t.adminPat, body: { name }, timeoutMs: 20_000 });
const searchOrgs = () => rest(t.url, "POST", "/resources/v3alpha/organizations/_search", { token: t.adminPat, body: {}, timeoutMs: 20_000 });
const readiness = () => rest(t.url, "GET", "/readyz", { timeoutMs: 20_000 });

async function timed<T>(call: () => Promise<T>): Promise<{ ms: number; r: T }> {
  const start = performance.now();
  const r = await call();
  return { ms: performance.now() - start, r };
}

describe.skipIf(!ownPostgresRunsHere)("a database whose network drops every packet", () => {
  it("answers 503 within the timeouts, notices the LISTEN connection is gone, and recovers when the network is back", async () => {
    const before = await createOrg("before-dark");
    expect(before.status, JSON.stringify(before.body)).toBe(201);

    proxy.blackhole();
    // A write and a read on connections the pool holds, and more than the pool holds (new connections): each is
    // answered UNAVAILABLE after a timeout, none hangs.
    const calls = await Promise.all([createOrg("in-the-dark"), searchOrgs(), ...Array.from({ length: 25 }, () => searchOrgs())].map((c) => timed(() => c)));
    for (const { ms, r } of calls) {
      expect(r.status, JSON.stringify(r.body)).toBe(503);
      expect(ms).toBeLessThan(12_000);
    }
    const dark = await until(
      "the heartbeat gives up the LISTEN connection",
      async () => {
        const r = await readiness();
        return (r.body as { notifications?: string }).notifications === "reconnecting" ? r : undefined;
      },
      20_000,
    );
    expect(dark.status).toBe(503);

    proxy.heal();
    const statuses: number[] = [];
    await until(
      "a write once the network is back",
      async () => {
        const r = await createOrg(`after-dark-${statuses.length}`);
        statuses.push(r.status);
        return r.status === 201 || undefined;
      },
      20_000,
    );
    expect(statuses.filter((s) => s !== 201 && s !== 503)).toEqual([]);
    await until(
      "ready, and listening again",
      async () => {
        const r = await readiness();
        return (r.status === 200 && !(r.body as { notifications?: string }).notifications) || undefined;
      },
      20_000,
    );
    const names = (await postgres.query<{ name: string }>("SELECT name FROM orgs WHERE name LIKE '%-dark%' ORDER BY name")).map((r) => r.name);
    expect(names).toEqual([`after-dark-${statuses.length - 1}`, "before-dark"]);
  });

  it("cancels a write waiting for a lock past the limit on the server as well, so that nothing waits on there", async () => {
    const holder = new pg.Client({ connectionString: postgres.url });
    await holder.connect();
    try {
      // as a projection rebuild does to the tables it rebuilds
      await holder.query("BEGIN");
      await holder.query("LOCK TABLE orgs IN EXCLUSIVE MODE");
      const { ms, r } = await timed(() => createOrg("behind-a-lock"));
      expect(r.status, JSON.stringify(r.body)).toBe(503);
      expect(ms).toBeLessThan(12_000);
      const waiting = await postgres.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> $1", [
        (holder as unknown as { processID: number }).processID,
      ]);
      expect(waiting[0]!.n).toBe(0);
    } finally {
      await holder.query("ROLLBACK").catch(() => {});
      await holder.end();
    }
    expect((await createOrg("after-the-lock")).status).toBe(201);
    expect((await postgres.query("SELECT 1 FROM orgs WHERE name = 'behind-a-lock'")).length).toBe(0);
  });

  it("with several servers in DATABASE_URL, passes over one that does not answer within the connect limit", async () => {
    const dark = await startTcpProxy(postgres.port);
    dark.blackhole();
    const db = await openDatabase({
      databaseUrl: `postgres://postgres@127.0.0.1:${dark.port},127.0.0.1:${postgres.port}/postgres`,
      dataDir: "",
      poolSize: 1,
      timeouts: { connectMs: 500, queryMs: 2_000 },
    });
    try {
      // the first server is asked for 500 ms, then the second answers; a probe of its own 3 s would take longer
      const { ms } = await timed(() => db.ping());
      expect(ms).toBeLessThan(2_500);
    } finally {
      await db.close();
      await dark.close();
    }
  });

  it("names its LISTEN session 'svc notifications' even when DATABASE_URL names the application", async () => {
    const sessions = async (name: string) =>
      (await postgres.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1", [name]))[0]!.n;
    const listeners = await sessions("svc notifications");
    const db = await openDatabase({ databaseUrl: `${postgres.url}?application_name=ops-tool`, dataDir: "", poolSize: 1 });
    try {
      const stop = await db.listen("named_probe", () => {});
      await db.ping();
      expect(await sessions("svc notifications")).toBe(listeners + 1);
      expect(await sessions("ops-tool")).toBe(1);
      await stop();
    } finally {
      await db.close();
    }
  });

  it("does not give a connection back to the pool with a transaction still open after an unanswered statement", async () => {
    await postgres.query("CREATE TABLE IF NOT EXISTS timeout_probe (n int)");
    // one connection, so that the statement after the failure gets the connection the failed transaction had
    const db = await openDatabase({ databaseUrl: postgres.url, dataDir: "", poolSize: 1, timeouts: { connectMs: 1_000, queryMs: 500 } });
    try {
      // Prisma's own interactive transaction (the notification worker's): its ROLLBACK would queue behind the
      // unanswered statement, be dropped unsent at its own timeout, and the connection go back in the transaction
      await expect(
        db.prisma.$transaction(async (tx) => {
          await tx.$executeRawUnsafe("INSERT INTO timeout_probe VALUES (1)");
          await tx.$queryRawUnsafe("SELECT pg_sleep(1.5)");
        }),
      ).rejects.toThrow();
      await new Promise((r) => setTimeout(r, 2_000));
      await db.pool.query("INSERT INTO timeout_probe VALUES (2)");
      // committed and seen by another session; the failed transaction's row is not
      expect((await postgres.query<{ n: number }>("SELECT n FROM timeout_probe ORDER BY n")).map((r) => r.n)).toEqual([2]);
    } finally {
      await db.close();
    }
  });
});
