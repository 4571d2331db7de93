import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { TEST_MASTERKEY } from "../support/database.js";
import { until } from "../support/machine.js";
import { type PrivatePostgres, startPrivatePostgres, startReplica, ownPostgresRunsHere } from "../support/private-postgres.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * A failover (issue 32, point 2): DATABASE_URL names a standby first and the primary second, as a multi-host URL
 * does (`host1,host2`, read-write by default). The server finds the primary; then the primary is killed and the
 * standby promoted, and the server writes to it with nothing acknowledged lost and no call answered 500.
 */
let primary: PrivatePostgres;
let standby: PrivatePostgres;
let t: TestServer;

beforeAll(async () => {
  if (!ownPostgresRunsHere) return;
  primary = await startPrivatePostgres();
  standby = await startReplica(primary);
  t = await startTestServer({
    DATABASE_URL: `postgres://postgres@127.0.0.1:${standby.port},127.0.0.1:${primary.port}/postgres`,
    SVC_MASTERKEY: TEST_MASTERKEY,
  });
}, 60_000);
afterAll(async () => {
  await t?.close().catch(() => {});
  standby?.remove();
  primary?.remove();
});

const createOrg = (name: string) => rest(t.url, "POST", "/resources/v3alpha/organizations", { token: t.adminPat, body: { name }, timeoutMs: 15_000 });

describe.skipIf(!ownPostgresRunsHere)("a DATABASE_URL with a standby and the primary", () => {
  it("writes to the primary, and after a promotion of the standby to it, losing nothing acknowledged", async () => {
    const before = await createOrg("before-failover");
    expect(before.status, JSON.stringify(before.body)).toBe(201);
    // acknowledged and replicated: a promotion keeps it (what an HA manager's synchronous mode guarantees)
    const [at] = await primary.query<{ position: string }>("SELECT pg_current_wal_insert_lsn()::text AS position");
    await until("the standby caught up", async () => {
      const [row] = await standby.query<{ caught: boolean }>("SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS caught", [at!.position]);
      return row?.caught || undefined;
    });

    primary.kill();
    await standby.query("SELECT pg_promote()");
    const statuses: number[] = [];
    const after = await until(
      "a write on the promoted standby",
      async () => {
        const r = await createOrg(`after-failover-${statuses.length}`);
        statuses.push(r.status);
        return r.status === 201 ? r : undefined;
      },
      20_000,
    );
    expect(statuses.filter((s) => s !== 201 && s !== 503)).toEqual([]);
    // both on the former standby, the new primary
    const names = (await standby.query<{ name: string }>("SELECT name FROM orgs WHERE name LIKE '%-failover%' ORDER BY name")).map((r) => r.name);
    expect(names).toEqual([`after-failover-${statuses.length - 1}`, "before-failover"]);
    const got = await rest(t.url, "GET", `/resources/v3alpha/organizations/${before.body.details.id}`, { token: t.adminPat });
    expect(got.status).toBe(200);
    expect(after.body.details.id).toBeTruthy();
    expect((await fetch(`${t.url}/readyz`)).status).toBe(200);
    expect(await (await fetch(`${t.url}/metrics`)).text()).toMatch(/^svc_db_failovers_total 1$/m);
  }, 60_000);
});
