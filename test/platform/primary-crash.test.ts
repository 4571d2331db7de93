import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { TEST_MASTERKEY } from "../support/database.js";
import { until } from "../support/machine.js";
import { type PrivatePostgres, startPrivatePostgres } from "../support/private-postgres.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { TargetServer, webhookOnEvent } from "../support/targets.js";

/**
 * The primary killed with SIGKILL under writes and started again (issue 32, point 2): every write the server
 * acknowledged is there afterwards, no call got anything but its answer or UNAVAILABLE (never a 500, never a hang),
 * and an event execution's target got each event once, none twice.
 */
let pg: PrivatePostgres;
let t: TestServer;
let receiver: TargetServer;

beforeAll(async () => {
  pg = await startPrivatePostgres();
  receiver = await new TargetServer().start();
  t = await startTestServer({ DATABASE_URL: pg.url, SVC_MASTERKEY: TEST_MASTERKEY, SVC_TARGET_DENY: "none" });
}, 60_000);
afterAll(async () => {
  await t?.close().catch(() => {});
  await receiver?.stop();
  pg?.remove();
});

describe("the primary killed under writes", () => {
  it("keeps every acknowledged write, answers the rest UNAVAILABLE, and calls the execution's target once per event", async () => {
    await webhookOnEvent(t.url, t.adminPat, "org.org.added", receiver.url, "crash");

    const acknowledged = new Map<string, string>();
    const statuses = new Map<number, number>();
    const faults: string[] = [];
    let n = 0;
    let writing = true;
    const writer = async () => {
      while (writing) {
        const name = `crash-${n++}`;
        const r = await rest(t.url, "POST", "/resources/v3alpha/organizations", { token: t.adminPat, body: { name }, timeoutMs: 15_000 });
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        if (r.status >= 500 && r.status !== 503) faults.push(JSON.stringify([r.body, r.headers]));
        if (r.status === 201) acknowledged.set(name, r.body.details.id);
        if (r.status !== 201) await new Promise((r) => setTimeout(r, 20));
      }
    };
    const writers = Array.from({ length: 6 }, writer);
    await until("writes acknowledged before the crash", () => acknowledged.size >= 20 || undefined, 15_000);
    pg.kill();
    await new Promise((r) => setTimeout(r, 300));
    // the server and the target run in this process: the restart must not stop them (a webhook whose answer
    // waited behind a blocked event loop would time out and be sent again, as it would to a slow target)
    await pg.startInBackground();
    const before = acknowledged.size;
    await until("writes acknowledged after the restart", () => acknowledged.size >= before + 20 || undefined, 20_000);
    writing = false;
    await Promise.all(writers);

    expect(
      [...statuses.keys()].filter((s) => s !== 201 && s !== 503),
      `${JSON.stringify(Object.fromEntries(statuses))} ${faults.join("\n")}`,
    ).toEqual([]);
    expect(statuses.get(503) ?? 0).toBeGreaterThan(0);
    for (const [name, id] of acknowledged) {
      const got = await rest(t.url, "GET", `/resources/v3alpha/organizations/${id}`, { token: t.adminPat });
      expect(got.status, name).toBe(200);
      expect(got.body.organization.name).toBe(name);
    }
    // every acknowledged organisation's event reaches the target; then none a second time
    await until(
      "every acknowledged event delivered",
      () => {
        const delivered = new Set(receiver.received.map((r) => r.body?.payload?.name));
        return [...acknowledged.keys()].every((name) => delivered.has(name)) || undefined;
      },
      30_000,
    );
    await new Promise((r) => setTimeout(r, 1500));
    const names = receiver.received.map((r) => r.body?.payload?.name as string);
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
  }, 90_000);
});
