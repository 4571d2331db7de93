import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_MASTERKEY } from "../support/database.js";
import { until } from "../support/machine.js";
import { ownPostgresRunsHere, type PrivatePostgres, startPrivatePostgres, startReplica } from "../support/private-postgres.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { TargetServer, webhookOnEvent } from "../support/targets.js";
import { writeOrganizations } from "../support/write-load.js";

/**
 * A promotion under load (issue 32, point 2): six clients write while the primary is killed and its standby
 * promoted. Replication is synchronous, as an HA manager's synchronous mode makes it (a commit is acknowledged once
 * the standby has it): every acknowledged write is on the new primary, every other call is answered UNAVAILABLE,
 * and an event execution's target gets each event once, across the change of server.
 */
let primary: PrivatePostgres;
let standby: PrivatePostgres;
let receiver: TargetServer;
let t: TestServer;

beforeAll(async () => {
  if (!ownPostgresRunsHere) return;
  primary = await startPrivatePostgres();
  standby = await startReplica(primary);
  // after the base backup, so that the standby, once promoted, waits for no standby of its own
  await primary.query("ALTER SYSTEM SET synchronous_standby_names = '*'");
  await primary.query("SELECT pg_reload_conf()");
  await until("the standby replicates synchronously", async () => {
    const rows = await primary.query<{ sync_state: string }>("SELECT sync_state FROM pg_stat_replication");
    return rows.some((r) => r.sync_state === "sync") || undefined;
  });
  receiver = await new TargetServer().start();
  t = await startTestServer({
    DATABASE_URL: `postgres://postgres@127.0.0.1:${primary.port},127.0.0.1:${standby.port}/postgres`,
    SVC_MASTERKEY: TEST_MASTERKEY,
    SVC_TARGET_DENY: "none",
  });
}, 60_000);
afterAll(async () => {
  await t?.close().catch(() => {});
  await receiver?.stop();
  standby?.remove();
  primary?.remove();
});

describe.skipIf(!ownPostgresRunsHere)("the standby promoted while clients write", () => {
  it("keeps every acknowledged write, answers the rest UNAVAILABLE, and calls the execution's target once per event", async () => {
    await webhookOnEvent(t.url, t.adminPat, "org.org.added", receiver.url, "promotion");
    const load = writeOrganizations(t, "promotion");
    await until("writes acknowledged before the promotion", () => load.acknowledged.size >= 20 || undefined, 15_000);
    primary.kill();
    await standby.query("SELECT pg_promote()");
    const before = load.acknowledged.size;
    await until("writes acknowledged on the promoted standby", () => load.acknowledged.size >= before + 20 || undefined, 30_000);
    await load.stop();

    load.expectNoFault();
    await load.expectAcknowledgedReadBack();
    await load.expectEachDeliveredOnce(receiver);
    // read back from the new primary itself, not from anything the server may hold
    const names = new Set((await standby.query<{ name: string }>("SELECT name FROM orgs WHERE name LIKE 'promotion-%'")).map((r) => r.name));
    expect([...load.acknowledged.keys()].filter((name) => !names.has(name))).toEqual([]);
    expect(await (await fetch(`${t.url}/metrics`)).text()).toMatch(/^svc_db_failovers_total 1$/m);
  }, 90_000);
});
