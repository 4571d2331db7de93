import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attemptDueMessage, queueMessages } from "../../src/command/notification-queue.js";
import { WAITING_FOR_PROVIDER, wakeWaitingMessages } from "../../src/command/notification-waiting.js";
import { Channels, NoProvider } from "../../src/notification/channels.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { MailServer } from "../support/smtp.js";

/**
 * Issue 31: users created without a password on an instance without a mail server each ask for an
 * initial-password mail. Those messages are queued waiting for a provider (no attempt, no retry, one warning),
 * survive a restart, and go out once a provider is configured.
 */

let t: TestServer;
let mail: MailServer;
const lines: string[] = [];
const logStream = { write: (line: string) => void lines.push(line) };
const warnings = () =>
  lines
    .flatMap((l) => l.split("\n").filter(Boolean))
    .map((l) => JSON.parse(l) as { level: number; msg: string })
    .filter((e) => e.level === 40);

beforeAll(async () => {
  mail = await new MailServer().start();
  t = await startTestServer({ SVC_LOG_LEVEL: "info" }, { logger: true, logStream });
});
afterAll(async () => {
  await t?.close();
  await mail?.stop();
});

async function humanWithoutPassword(username: string): Promise<string> {
  const r = await rest(t.url, "POST", "/resources/v3alpha/users", {
    token: t.adminPat,
    body: { username, human: { profile: { givenName: username, familyName: "Test" }, email: { address: `${username}@example.com` } } },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.details.id as string;
}

describe("messages of a channel without a provider", () => {
  it("are queued waiting, unretried, kept over a restart, and sent once a provider is configured", async () => {
    const users = 4;
    for (let i = 0; i < users; i++) await humanWithoutPassword(`nomail${i}`);
    await t.server.notifications.idle();
    const rows = await t.server.db.prisma.notificationMessage.findMany({ where: { instanceId: t.instanceId } });
    expect(rows).toHaveLength(users);
    for (const row of rows) {
      expect(row).toMatchObject({ status: "pending", attempts: 0, kind: "initPassword" });
      expect(row.lastError.startsWith(WAITING_FOR_PROVIDER)).toBe(true);
      // Due only at its expiry: no delivery claims it before a provider wakes it.
      expect(row.nextAttemptAt.getTime()).toBe(row.expiresAt.getTime());
    }
    expect(warnings().filter((w) => /^no SMTP provider: messages wait until one is configured$/.test(w.msg))).toHaveLength(1);
    expect(warnings().filter((w) => /will retry|given up/.test(w.msg))).toEqual([]);
    expect(t.server.notifications.stats).toMatchObject({ sent: 0, retried: 0, failed: 0 });

    // Across a restart they still wait, and the new process warns no more than once either.
    await t.stop();
    t = await t.restart();
    await humanWithoutPassword("nomail-after-restart");
    await t.server.notifications.idle();
    expect(await t.server.db.prisma.notificationMessage.count({ where: { status: "pending", attempts: 0 } })).toBe(users + 1);

    const smtp = await rest(t.url, "POST", "/resources/v3alpha/smtp_providers", {
      token: t.adminPat,
      body: { host: "127.0.0.1", port: mail.port, tls: "SMTP_TLS_MODE_NONE", senderAddress: "iam@example.com" },
    });
    expect(smtp.status, JSON.stringify(smtp.body)).toBe(201);
    await rest(t.url, "POST", `/resources/v3alpha/smtp_providers/${smtp.body.details.id}/_activate`, { token: t.adminPat, body: {} });
    await t.server.notifications.idle();
    const to = (await mail.waitFor(users + 1)).flatMap((m) => m.to).sort();
    expect(to).toEqual([...Array.from({ length: users }, (_, i) => `nomail${i}@example.com`), "nomail-after-restart@example.com"].sort());
    const after = await t.server.db.prisma.notificationMessage.findMany({ where: { instanceId: t.instanceId } });
    expect(after.map((r) => [r.status, r.attempts])).toEqual(Array.from({ length: users + 1 }, () => ["sent", 1]));

    // With a provider, a new user's mail is queued due and goes out at once.
    await humanWithoutPassword("withmail");
    await t.server.notifications.idle();
    expect((await mail.waitFor(users + 2)).flatMap((m) => m.to)).toContain("withmail@example.com");
  }, 120_000);
});

describe("a provider configured while a waiting message is being attempted", () => {
  it("wakes it once the attempt that found no provider is recorded", async () => {
    // The server's own worker would claim the message: the test plays the worker.
    await t.server.notifications.stop();
    const db = t.server.db;
    const now = new Date();
    const expiresAt = new Date(now.getTime() + 3_600_000);
    const waiting = `${WAITING_FOR_PROVIDER}no SMTP provider`;
    const id = `race-${now.getTime()}/initPassword`;
    const message = {
      id,
      instanceId: t.instanceId,
      userId: "u-race",
      channel: "mail" as const,
      kind: "initPassword",
      sealedCode: "x",
      expiresAt,
      createdAt: now,
    };
    await queueMessages(db, [{ ...message, dueAt: now, lastError: waiting }]);

    // The attempt decides "no provider"; the provider's wake runs before that decision is recorded. The attempt
    // records it once the wake either answered (it skipped the row) or is seen waiting for the row's lock.
    let wake: Promise<number> | undefined;
    const attempted = attemptDueMessage(db, new Date(), async () => {
      wake = wakeWaitingMessages(db, new Date(), "mail", t.instanceId);
      await Promise.race([wake, updateWaitingForLock(db)]);
      return { status: "retry", attempts: 0, reason: waiting, nextAttemptAt: expiresAt };
    });
    expect((await attempted)?.message.id).toBe(id);
    expect(await wake).toBe(1);
    const row = await db.prisma.notificationMessage.findUniqueOrThrow({ where: { id } });
    expect(row.nextAttemptAt.getTime()).toBeLessThanOrEqual(Date.now());
  }, 30_000);
});

describe("a provider this process's cache has not heard of yet", () => {
  it("is found in the table: no message waits for it", async () => {
    const channels = new Channels(t.server.notificationProviders, undefined, undefined as never);
    // No SMS provider: the cache now holds "none".
    expect(await channels.missing(t.instanceId, "sms")).toBeInstanceOf(NoProvider);
    // Another process's provider before its NOTIFY arrives: in the table, this process's cache not told.
    const now = new Date();
    await t.server.db.prisma.notificationProvider.create({
      data: {
        id: `stale-cache-${now.getTime()}`,
        instanceId: t.instanceId,
        kind: "sms",
        providerType: "http",
        description: "configured elsewhere",
        config: { endpoint: "http://127.0.0.1:9/sms" },
        secret: "",
        active: true,
        sequence: 1,
        createdAt: now,
        changeDate: now,
      },
    });
    expect(await channels.missing(t.instanceId, "sms")).toBeUndefined();
  });
});

/** Resolves once an UPDATE of notification messages in this database waits for a row lock. */
async function updateWaitingForLock(db: TestServer["server"]["db"]): Promise<void> {
  for (;;) {
    const [row] = await db.prisma.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE 'UPDATE%notification_messages%'`;
    if (row!.n > 0) return;
    await new Promise((ok) => setTimeout(ok, 20));
  }
}
