import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emailCodeAdded, passwordCodeAdded, phoneCodeAdded } from "../../src/events/index.js";
import type { RunningServer } from "../../src/server/app.js";
import { messageRetry } from "../../src/notification/worker.js";
import { rest } from "../support/clients.js";
import { MovableClock } from "../support/clock.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { decodedMail, MailServer } from "../support/smtp.js";
import { TargetServer, verifySignature } from "../support/targets.js";

let t: TestServer;
let mail: MailServer;
let sms: TargetServer;
let smsKey: string;
let orgId: string;
const clock = new MovableClock();

/** What a flow's command appends: a code for the user, sealed, with its expiry. */
async function appendCode(
  s: RunningServer,
  instanceId: string,
  userId: string,
  def: typeof emailCodeAdded | typeof phoneCodeAdded | typeof passwordCodeAdded,
  code: string,
  extra: object = {},
) {
  const { result } = await s.es.execute(async (w) => {
    await w.lock(instanceId, "user", userId);
    const payload = { code: s.box.seal(code), expiresAt: new Date(Date.now() + 60 * 60_000).toISOString(), ...extra };
    const [e] = await w.push(instanceId, "test", [(def as typeof passwordCodeAdded).event({ aggregateId: userId, resourceOwner: orgId }, payload as never)]);
    return e!;
  });
  return result;
}

const createHuman = async (username: string, language: string, phone?: string) => {
  const r = await rest(t.url, "POST", `/resources/v3alpha/users?ctx.org_id=${orgId}`, {
    token: t.adminPat,
    body: {
      username,
      human: {
        profile: { givenName: username, familyName: "Test", preferredLanguage: language },
        // verified and with a password: the codes these tests append are the only messages
        email: { address: `${username}@example.com`, isVerified: true },
        password: { password: "Secr3t!pass" },
        ...(phone ? { phone: { number: phone, isVerified: true } } : {}),
      },
    },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.details.id as string;
};

beforeAll(async () => {
  mail = await new MailServer().start();
  sms = await new TargetServer().start();
  t = await startTestServer({}, { clock });
  orgId = t.defaultOrgId;
  const smtp = await rest(t.url, "POST", "/resources/v3alpha/smtp_providers", {
    token: t.adminPat,
    body: { host: "127.0.0.1", port: mail.port, tls: "SMTP_TLS_MODE_NONE", senderAddress: "iam@example.com", senderName: "IAM" },
  });
  await rest(t.url, "POST", `/resources/v3alpha/smtp_providers/${smtp.body.details.id}/_activate`, { token: t.adminPat, body: {} });
  const s = await rest(t.url, "POST", "/resources/v3alpha/sms_providers", { token: t.adminPat, body: { http: { url: sms.url } } });
  smsKey = s.body.signingKey;
  await rest(t.url, "POST", `/resources/v3alpha/sms_providers/${s.body.details.id}/_activate`, { token: t.adminPat, body: {} });
});
afterAll(async () => {
  await t?.close();
  await mail?.stop();
  await sms?.stop();
});

const decoded = decodedMail;

describe("the notification worker", () => {
  it("mails the e-mail code and link to the user, in the user's language, once per event", async () => {
    const userId = await createHuman("marie", "fr");
    const before = mail.received.length;
    const e = await appendCode(t.server, t.instanceId, userId, emailCodeAdded, "K7Q2PX");
    await t.server.notifications.idle();
    const got = mail.received.slice(before);
    expect(got).toHaveLength(1);
    expect(got[0]!.to).toEqual(["marie@example.com"]);
    const body = decoded(got[0]!.raw);
    expect(body).toContain("votre code est K7Q2PX. Saisissez-le, ou ouvrez ce lien pour vérifier votre adresse e-mail");
    // the link: the instance's domain at the server's port
    expect(body).toMatch(new RegExp(`^http://[^/]+:${t.port}/ui/login/email/verify\\?userId=${userId}&code=K7Q2PX$`, "m"));
    const row = await t.server.db.prisma.notificationMessage.findUniqueOrThrow({ where: { id: `${e.position}/verifyEmail` } });
    expect(row).toMatchObject({ status: "sent", attempts: 1 });
    expect(row.code).not.toContain("K7Q2PX");

    // the subscription handing the same event again (a restart before its cursor moved) sends nothing more
    await t.server.db.prisma.$executeRawUnsafe(
      "INSERT INTO notification_messages (id, instance_id, user_id, channel, kind, code, expires_at, status, attempts, next_attempt_at, last_error, created_at) SELECT id, instance_id, user_id, channel, kind, code, expires_at, 'pending', 0, now(), '', now() FROM notification_messages WHERE id = $1 ON CONFLICT DO NOTHING",
      row.id,
    );
    await t.server.notifications.idle();
    expect(mail.received.length - before).toBe(1);
  });

  it("sends the phone code by SMS through the HTTP provider, signed, with the language", async () => {
    const userId = await createHuman("hans", "de", "+41790000003");
    const before = sms.received.length;
    await appendCode(t.server, t.instanceId, userId, phoneCodeAdded, "918273");
    await t.server.notifications.idle();
    const got = sms.received.slice(before);
    expect(got).toHaveLength(1);
    expect(got[0]!.body).toMatchObject({ recipient: "+41790000003", language: "de" });
    expect(got[0]!.body.text).toBe("Ihr Bestätigungscode lautet 918273. Er ist 60 Minuten gültig.");
    expect(verifySignature(smsKey, got[0]!.signature, got[0]!.raw)).toBe(true);
  });

  it("mails the initial password and reset links (English fallback for a language without messages)", async () => {
    const userId = await createHuman("joost", "nl");
    const before = mail.received.length;
    await appendCode(t.server, t.instanceId, userId, passwordCodeAdded, "INIT1", { reason: "init" });
    await appendCode(t.server, t.instanceId, userId, passwordCodeAdded, "RESET1", { reason: "reset" });
    await t.server.notifications.idle();
    const got = mail.received.slice(before).map((m) => decoded(m.raw));
    expect(got).toHaveLength(2);
    expect(
      got.find((b) => b.includes("/ui/login/password/init?userId=") && b.includes("code=INIT1") && b.includes("an account was created for you")),
    ).toBeDefined();
    expect(got.find((b) => b.includes("/ui/login/password/reset?userId=") && b.includes("code=RESET1") && b.includes("reset the password"))).toBeDefined();
  });

  it("retries with back-off after a temporary refusal and sends once", async () => {
    const userId = await createHuman("retry", "en");
    mail.refuse = 451;
    const before = mail.received.length;
    const e = await appendCode(t.server, t.instanceId, userId, emailCodeAdded, "RETRY1");
    const id = `${e.position}/verifyEmail`;
    for (let i = 0; i < 100; i++) {
      const row = await t.server.db.prisma.notificationMessage.findUnique({ where: { id } });
      if (row && row.attempts >= 1) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const waiting = await t.server.db.prisma.notificationMessage.findUniqueOrThrow({ where: { id } });
    expect(waiting).toMatchObject({ status: "pending", attempts: 1 });
    expect(waiting.lastError).toMatch(/451/);
    expect(waiting.nextAttemptAt.getTime()).toBeGreaterThan(Date.now() - 100);
    mail.refuse = undefined;
    // Not due before its back-off: nothing is sent until the server's clock moves past it.
    await t.server.notifications.idle();
    expect(mail.received.length - before).toBe(0);
    clock.advance(messageRetry.firstDelayMs);
    await t.server.notifications.idle();
    expect(mail.received.length - before).toBe(1);
    expect(await t.server.db.prisma.notificationMessage.findUniqueOrThrow({ where: { id } })).toMatchObject({ status: "sent", attempts: 2 });
  });

  it("gives up on a permanent refusal: an event, a log line and a count of failures", async () => {
    const userId = await createHuman("refused", "en");
    mail.refuse = 550;
    const failedBefore = t.server.notifications.stats.failed;
    const e = await appendCode(t.server, t.instanceId, userId, emailCodeAdded, "NOPE1");
    await t.server.notifications.idle();
    mail.refuse = undefined;
    const id = `${e.position}/verifyEmail`;
    expect(await t.server.db.prisma.notificationMessage.findUniqueOrThrow({ where: { id } })).toMatchObject({ status: "failed", attempts: 1 });
    const events = await t.server.db.prisma.event.findMany({ where: { aggregateId: id, type: "notification.message.failed" } });
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toMatchObject({ userId, channel: "mail", kind: "verifyEmail", attempts: 1 });
    expect(t.server.notifications.stats.failed).toBe(failedBefore + 1);
    const metrics = await fetch(`${t.url}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(/^svc_notifications_total\{result="failed"\} 1$/m);
    expect(metrics).toMatch(/^svc_notifications_total\{result="retried"\} 1$/m);
    expect(metrics).toMatch(/^svc_notifications_total\{result="sent"\} [1-9]/m);
  });
});
