import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { connectClient } from "../support/clients.js";
import { NotificationProviderService } from "../../gen/svc/resources/notification/v3alpha/provider_service_pb.js";
import { SMTPTLSMode } from "../../gen/svc/resources/notification/v3alpha/provider_pb.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { MailServer } from "../support/smtp.js";

let t: TestServer;
let system: MailServer;
let own: MailServer;

beforeAll(async () => {
  system = await new MailServer({ sys: "sys-pw" }).start();
  own = await new MailServer().start();
  t = await startTestServer({ SVC_SMTP_URL: `smtp://sys:sys-pw@127.0.0.1:${system.port}`, SVC_SMTP_FROM: "IAM System <noreply@system.example>" });
});
afterAll(async () => {
  await t?.close();
  await system?.stop();
  await own?.stop();
});

describe("the system default mail server", () => {
  it("sends an instance's mail while it has no active SMTP provider; the active provider overrides it", async () => {
    await t.server.channels.mail(t.instanceId, { to: "a@example.com", subject: "one", text: "via the default" });
    const [m] = await system.waitFor(1);
    expect(m!.to).toEqual(["a@example.com"]);
    expect(m!.from).toBe("noreply@system.example");
    expect(m!.user).toBe("sys");
    expect(m!.raw).toMatch(/^From: IAM System <noreply@system.example>/m);

    const api = connectClient(NotificationProviderService, t.url, t.adminPat);
    const { details } = await api.createSMTPProvider({
      provider: { host: "127.0.0.1", port: own.port, tls: SMTPTLSMode.SMTP_TLS_MODE_NONE, senderAddress: "iam@instance.example" },
    });
    // created but not active: still the default
    await t.server.channels.mail(t.instanceId, { to: "b@example.com", subject: "two", text: "still the default" });
    await system.waitFor(2);
    await api.activateSMTPProvider({ id: details!.id });
    await t.server.channels.mail(t.instanceId, { to: "c@example.com", subject: "three", text: "via the instance's provider" });
    const [o] = await own.waitFor(1);
    expect(o!.to).toEqual(["c@example.com"]);
    expect(o!.from).toBe("iam@instance.example");
    expect(system.received).toHaveLength(2);
  });

  it("is configured by a valid smtp: or smtps: URL and a sender", () => {
    const base = { SVC_MASTERKEY: "0123456789abcdef0123456789abcdef" };
    expect(loadConfig({ ...base, SVC_SMTP_URL: "smtps://u:p@mail.example.com", SVC_SMTP_FROM: "a@example.com" }, []).smtp).toEqual({
      url: "smtps://u:p@mail.example.com",
      from: "a@example.com",
    });
    expect(loadConfig(base, []).smtp).toBeUndefined();
    expect(() => loadConfig({ ...base, SVC_SMTP_URL: "http://mail.example.com", SVC_SMTP_FROM: "a@example.com" }, [])).toThrow(/SVC_SMTP_URL/);
    expect(() => loadConfig({ ...base, SVC_SMTP_URL: "smtp://u:secretpw@mail.example.com" }, [])).toThrow(/SVC_SMTP_FROM is required/);
    try {
      loadConfig({ ...base, SVC_SMTP_URL: "smtp://u:secretpw@" }, []);
    } catch (e) {
      expect(String(e)).not.toContain("secretpw");
    }
  });
});
