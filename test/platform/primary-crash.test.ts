import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_MASTERKEY } from "../support/database.js";
import { until } from "../support/machine.js";
import { type PrivatePostgres, startPrivatePostgres, ownPostgresRunsHere } from "../support/private-postgres.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { TargetServer, webhookOnEvent } from "../support/targets.js";
import { writeOrganizations } from "../support/write-load.js";

/**
 * The primary killed with SIGKILL under writes and started again (issue 32, point 2): every write the server
 * acknowledged is there afterwards, no call got anything but its answer or UNAVAILABLE (never a 500, never a hang),
 * and an event execution's target got each event once, none twice.
 */
let pg: PrivatePostgres;
let t: TestServer;
let receiver: TargetServer;

beforeAll(async () => {
  if (!ownPostgresRunsHere) return;
  pg = await startPrivatePostgres();
  receiver = await new TargetServer().start();
  t = await startTestServer({ DATABASE_URL: pg.url, SVC_MASTERKEY: TEST_MASTERKEY, SVC_TARGET_DENY: "none" });
}, 60_000);
afterAll(async () => {
  await t?.close().catch(() => {});
  await receiver?.stop();
  pg?.remove();
});

describe.skipIf(!ownPostgresRunsHere)("the primary killed under writes", () => {
  it("keeps every acknowledged write, answers the rest UNAVAILABLE, and calls the execution's target once per event", async () => {
    await webhookOnEvent(t.url, t.adminPat, "org.org.added", receiver.url, "crash");

    const load = writeOrganizations(t, "crash");
    await until("writes acknowledged before the crash", () => load.acknowledged.size >= 20 || undefined, 15_000);
    pg.kill();
    await new Promise((r) => setTimeout(r, 300));
    // the server and the target run in this process: the restart must not stop them (a webhook whose answer
    // waited behind a blocked event loop would time out and be sent again, as it would to a slow target)
    await pg.startInBackground();
    const before = load.acknowledged.size;
    await until("writes acknowledged after the restart", () => load.acknowledged.size >= before + 20 || undefined, 20_000);
    await load.stop();

    load.expectNoFault();
    expect(load.statuses.get(503) ?? 0).toBeGreaterThan(0);
    await load.expectAcknowledgedReadBack();
    await load.expectEachDeliveredOnce(receiver);
  }, 90_000);
});
