import { rest } from "./clients.js";
import { startTestServer, type TestServer } from "./server.js";
import { MailServer } from "./smtp.js";
import { TargetServer } from "./targets.js";

/** A test server whose instance mails through a real SMTP server and sends SMS to a real HTTP endpoint. */
export async function startMessagingServer(
  env: Record<string, string> = {},
  options: Parameters<typeof startTestServer>[1] = {},
): Promise<{ t: TestServer; mail: MailServer; sms: TargetServer; close(): Promise<void> }> {
  const mail = await new MailServer().start();
  const sms = await new TargetServer().start();
  const t = await startTestServer(env, options);
  const admin = { token: t.adminPat };
  const smtp = await rest(t.url, "POST", "/resources/v3alpha/smtp_providers", {
    ...admin,
    body: { host: "127.0.0.1", port: mail.port, tls: "SMTP_TLS_MODE_NONE", senderAddress: "iam@example.com", senderName: "IAM" },
  });
  await rest(t.url, "POST", `/resources/v3alpha/smtp_providers/${smtp.body.details.id}/_activate`, { ...admin, body: {} });
  const s = await rest(t.url, "POST", "/resources/v3alpha/sms_providers", { ...admin, body: { http: { url: sms.url } } });
  await rest(t.url, "POST", `/resources/v3alpha/sms_providers/${s.body.details.id}/_activate`, { ...admin, body: {} });
  return {
    t,
    mail,
    sms,
    async close() {
      await t.close();
      await mail.stop();
      await sms.stop();
    },
  };
}

/** The messages received for `address`, once at least `n` arrived. */
export async function mailsTo(mail: MailServer, address: string, n = 1, timeoutMs = 10_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const got = mail.received.filter((m) => m.to.includes(address));
    if (got.length >= n) return got;
    if (Date.now() > end) throw new Error(`${got.length} messages to ${address}, expected ${n}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
