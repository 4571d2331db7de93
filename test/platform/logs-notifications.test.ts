import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emailCodeAdded, phoneCodeAdded } from "../../src/events/index.js";
import { messageRetry } from "../../src/notification/worker.js";
import { rest } from "../support/clients.js";
import { MovableClock } from "../support/clock.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { MailServer } from "../support/smtp.js";

/**
 * Issue 29, logs: a channel without a provider is one warning per instance and channel, and its messages wait for
 * a provider (their attempts unspent) instead of being retried with back-off, each retry a warning. Once a
 * provider is configured, the messages that waited go out.
 */

let t: TestServer;
let mail: MailServer;
const lines: string[] = [];
const clock = new MovableClock();
const entries = () => lines.flatMap((l) => l.split("\n").filter(Boolean)).map((l) => JSON.parse(l) as { level: number; msg: string; [k: string]: unknown });
const warnings = () => entries().filter((e) => e.level === 40);

beforeAll(async () => {
  mail = await new MailServer().start();
  t = await startTestServer({ SVC_LOG_LEVEL: "info" }, { logger: true, logStream: { write: (line) => void lines.push(line) }, clock });
});
afterAll(async () => {
  await t?.close();
  await mail?.stop();
});

/** A human user with a verified address and phone, and a code for each that the worker is to send. */
async function userWithCodes(username: string): Promise<string> {
  const r = await rest(t.url, "POST", `/resources/v3alpha/users?ctx.org_id=${t.defaultOrgId}`, {
    token: t.adminPat,
    body: {
      username,
      human: {
        profile: { givenName: username, familyName: "Test" },
        email: { address: `${username}@example.com`, isVerified: true },
        phone: { number: "+41790000009", isVerified: true },
        password: { password: "Secr3t!pass" },
      },
    },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  const userId = r.body.details.id as string;
  await t.server.es.execute(async (w) => {
    await w.lock(t.instanceId, "user", userId);
    const payload = () => ({ code: t.server.box.seal("C0DE42"), expiresAt: new Date(clock.now() + 24 * 3600_000).toISOString() });
    await w.push(t.instanceId, "test", [
      emailCodeAdded.event({ aggregateId: userId, resourceOwner: t.defaultOrgId }, payload()),
      phoneCodeAdded.event({ aggregateId: userId, resourceOwner: t.defaultOrgId }, payload()),
    ]);
  });
  return userId;
}

describe("a channel without a provider", () => {
  it("is one warning per channel; its messages wait, unspent, and go out once a provider is configured", async () => {
    const users = 6;
    for (let i = 0; i < users; i++) await userWithCodes(`waiting${i}`);
    await t.server.notifications.idle();
    // What the back-off would have retried many times over (1 s doubling to 5 min, 12 attempts): an hour.
    for (let i = 0; i < 24; i++) {
      clock.advance(messageRetry.maxDelayMs / 2);
      await t.server.notifications.idle();
    }
    const rows = await t.server.db.prisma.notificationMessage.findMany({ where: { instanceId: t.instanceId } });
    expect(rows).toHaveLength(2 * users);
    for (const row of rows) expect(row).toMatchObject({ status: "pending", attempts: 0 });
    const byMessage = (m: RegExp) => warnings().filter((w) => m.test(w.msg));
    expect(byMessage(/^no SMTP provider: messages wait until one is configured$/)).toHaveLength(1);
    expect(byMessage(/^no SMS provider: messages wait until one is configured$/)).toHaveLength(1);
    expect(byMessage(/^no SMTP provider/)[0]).toMatchObject({ instanceId: t.instanceId, channel: "mail" });
    expect(byMessage(/will retry|given up/)).toEqual([]);
    expect(t.server.notifications.stats).toMatchObject({ retried: 0, failed: 0, sent: 0 });

    const smtp = await rest(t.url, "POST", "/resources/v3alpha/smtp_providers", {
      token: t.adminPat,
      body: { host: "127.0.0.1", port: mail.port, tls: "SMTP_TLS_MODE_NONE", senderAddress: "iam@example.com", senderName: "IAM" },
    });
    expect(smtp.status, JSON.stringify(smtp.body)).toBe(201);
    await rest(t.url, "POST", `/resources/v3alpha/smtp_providers/${smtp.body.details.id}/_activate`, { token: t.adminPat, body: {} });
    // No clock move: the provider's events make the waiting mail due at once.
    await t.server.notifications.idle();
    expect(mail.received).toHaveLength(users);
    const after = await t.server.db.prisma.notificationMessage.findMany({ where: { instanceId: t.instanceId } });
    expect(after.filter((r) => r.channel === "mail").map((r) => [r.status, r.attempts])).toEqual(Array.from({ length: users }, () => ["sent", 1]));
    // SMS still has no provider: still waiting, and no second warning for it.
    expect(after.filter((r) => r.channel === "sms").map((r) => [r.status, r.attempts])).toEqual(Array.from({ length: users }, () => ["pending", 0]));
    expect(byMessage(/^no SMS provider/)).toHaveLength(1);
    expect(byMessage(/^no SMTP provider/)).toHaveLength(1);
  }, 120_000);
});
