import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotificationProviderService } from "../../gen/svc/resources/notification/v3alpha/provider_service_pb.js";
import { SMTPTLSMode } from "../../gen/svc/resources/notification/v3alpha/provider_pb.js";
import { connectClient, call, expectCode, protocols, rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { MailServer } from "../support/smtp.js";
import { TargetServer, verifySignature } from "../support/targets.js";

let t: TestServer;
let mail: MailServer;
let sms: TargetServer;
let api: ReturnType<typeof connectClient<typeof NotificationProviderService>>;
const S = NotificationProviderService;

const smtp = (extra: object = {}) => ({
  description: "relay",
  host: "127.0.0.1",
  port: mail.port,
  tls: "SMTP_TLS_MODE_NONE",
  user: "mailer",
  password: "s3cret-pw",
  senderAddress: "iam@example.com",
  senderName: "IAM",
  replyToAddress: "help@example.com",
  ...extra,
});

beforeAll(async () => {
  mail = await new MailServer({ mailer: "s3cret-pw" }).start();
  sms = await new TargetServer().start();
  // loopback reachable for the mail and SMS servers here, the metadata address denied (the address policy's cases)
  t = await startTestServer({ SVC_TARGET_DENY: "link-local,unspecified" });
  api = connectClient(S, t.url, t.adminPat);
});
afterAll(async () => {
  await t?.close();
  await mail?.stop();
  await sms?.stop();
});

describe("SMTP providers", () => {
  it("are created (201), read without the password, patched, searched, tested and deleted over REST", async () => {
    const created = await rest(t.url, "POST", "/resources/v3alpha/smtp_providers", { token: t.adminPat, body: smtp() });
    expect(created.status).toBe(201);
    const id = created.body.details.id;
    expect(created.body.details).toMatchObject({ sequence: "1", resourceOwner: { type: "OWNER_TYPE_INSTANCE", id: t.instanceId } });

    const got = await rest(t.url, "GET", `/resources/v3alpha/smtp_providers/${id}`, { token: t.adminPat });
    expect(got.status).toBe(200);
    const { password: _pw, ...shown } = smtp();
    expect(got.body.provider.provider).toEqual({ ...shown, password: "" });
    expect(got.body.provider.state).toBe("EFFECTIVE_STATE_INACTIVE");
    expect(JSON.stringify(got.body)).not.toContain("s3cret-pw");
    // stored encrypted: neither the event nor the projection holds the password in clear
    const events = await t.server.db.prisma.event.findMany({ where: { aggregateId: id } });
    expect(JSON.stringify(events.map((e) => e.payload))).not.toContain("s3cret-pw");

    // the test message goes through the provider with its credentials
    const tested = await rest(t.url, "POST", `/resources/v3alpha/smtp_providers/${id}/_test`, {
      token: t.adminPat,
      body: { receiverAddress: "admin@example.com" },
    });
    expect(tested.status).toBe(200);
    const [m] = await mail.waitFor(1);
    expect(m!.to).toEqual(["admin@example.com"]);
    expect(m!.from).toBe("iam@example.com");
    expect(m!.user).toBe("mailer");
    expect(m!.raw).toMatch(/^Reply-To: help@example.com/m);
    expect(m!.raw).toMatch(/^From: IAM <iam@example.com>/m);

    // a wrong password (patched) makes the test fail with the reason, FAILED_PRECONDITION (400)
    const patched = await rest(t.url, "PATCH", `/resources/v3alpha/smtp_providers/${id}`, { token: t.adminPat, body: { password: "wrong", port: mail.port } });
    expect(patched.status).toBe(200);
    expect(patched.body.details.sequence).toBe("2");
    const failed = await rest(t.url, "POST", `/resources/v3alpha/smtp_providers/${id}/_test`, {
      token: t.adminPat,
      body: { receiverAddress: "admin@example.com" },
    });
    expect(failed.status).toBe(400);
    expect(failed.body.message).toMatch(/test message was not sent/);
    expect(mail.received).toHaveLength(1);

    // a patch that changes nothing writes no event
    const same = await rest(t.url, "PATCH", `/resources/v3alpha/smtp_providers/${id}`, { token: t.adminPat, body: { password: "wrong", host: "127.0.0.1" } });
    expect(same.body.details.sequence).toBe("2");

    const found = await rest(t.url, "POST", "/resources/v3alpha/smtp_providers/_search", {
      token: t.adminPat,
      body: [{ description: { description: "rel", method: "TEXT_FILTER_METHOD_STARTS_WITH" } }],
    });
    expect(found.status).toBe(200);
    expect(found.body.result.map((r: any) => r.details.id)).toEqual([id]);
    // SMS providers are another resource
    const noSms = await rest(t.url, "POST", "/resources/v3alpha/sms_providers/_search", { token: t.adminPat, body: [] });
    expect(noSms.body.result).toEqual([]);
    expect((await rest(t.url, "GET", `/resources/v3alpha/sms_providers/${id}`, { token: t.adminPat })).status).toBe(404);

    expect((await rest(t.url, "DELETE", `/resources/v3alpha/smtp_providers/${id}`, { token: t.adminPat })).status).toBe(200);
    expect((await rest(t.url, "GET", `/resources/v3alpha/smtp_providers/${id}`, { token: t.adminPat })).status).toBe(404);
    expect((await rest(t.url, "DELETE", `/resources/v3alpha/smtp_providers/${id}`, { token: t.adminPat })).status).toBe(404);
  });

  it("have at most one active per instance: activating one deactivates the other", async () => {
    const a = (await api.createSMTPProvider({ provider: { host: "a.example.com", senderAddress: "a@example.com", tls: SMTPTLSMode.SMTP_TLS_MODE_TLS } }))
      .details!.id;
    const b = (await api.createSMTPProvider({ provider: { host: "b.example.com", senderAddress: "b@example.com" } })).details!.id;
    await api.activateSMTPProvider({ id: a });
    expect((await api.getSMTPProvider({ id: a })).provider!.state).toBe(1);
    const r = await rest(t.url, "POST", `/resources/v3alpha/smtp_providers/${b}/_activate`, { token: t.adminPat, body: {} });
    expect(r.status).toBe(200);
    expect((await api.getSMTPProvider({ id: a })).provider!.state).toBe(2);
    expect((await api.getSMTPProvider({ id: b })).provider!.state).toBe(1);
    const active = await rest(t.url, "POST", "/resources/v3alpha/smtp_providers/_search", {
      token: t.adminPat,
      body: [{ state: { state: "EFFECTIVE_STATE_ACTIVE" } }],
    });
    expect(active.body.result.map((x: any) => x.details.id)).toEqual([b]);
    // the worker's read: the instance's active provider
    expect((await t.server.notificationProviders.active(t.instanceId, "smtp"))?.id).toBe(b);
    const d = await rest(t.url, "POST", `/resources/v3alpha/smtp_providers/${b}/_deactivate`, { token: t.adminPat, body: {} });
    expect(d.status).toBe(200);
    expect(await t.server.notificationProviders.active(t.instanceId, "smtp")).toBeNull();
    expect((await api.getSMTPProvider({ id: a })).provider!.provider!.tls).toBe(SMTPTLSMode.SMTP_TLS_MODE_TLS);
    expect((await api.getSMTPProvider({ id: b })).provider!.provider!.tls).toBe(SMTPTLSMode.SMTP_TLS_MODE_STARTTLS);
  });

  it("enforce the field rules, naming the field", async () => {
    const cases: [object, string][] = [
      [smtp({ host: "" }), "provider.host"],
      [smtp({ senderAddress: "nobody" }), "provider.sender_address"],
      [smtp({ replyToAddress: "x" }), "provider.reply_to_address"],
      [smtp({ port: 70000 }), "provider.port"],
    ];
    for (const [body, field] of cases) {
      const r = await rest(t.url, "POST", "/resources/v3alpha/smtp_providers", { token: t.adminPat, body });
      expect(r.status, field).toBe(400);
      expect(r.body.message).toContain(field);
    }
  });

  it("need notification.provider.* permissions: a user without them is refused", async () => {
    const { token } = await t.serviceUser("no-notif-rights");
    const r = await rest(t.url, "POST", "/resources/v3alpha/smtp_providers", { token, body: smtp() });
    expect(r.status).toBe(403);
    const g = await rest(t.url, "POST", "/resources/v3alpha/sms_providers/_search", { token, body: [] });
    expect(g.status).toBe(403);
  });

  it.each(protocols)("are served over %s", async (protocol) => {
    const res = await call(
      protocol,
      t.url,
      S,
      S.method.createSMTPProvider,
      create(S.method.createSMTPProvider.input, { provider: { host: "h.example.com", senderAddress: `${protocol}@example.com` } }),
      {
        token: t.adminPat,
      },
    );
    const got = await call(protocol, t.url, S, S.method.getSMTPProvider, create(S.method.getSMTPProvider.input, { id: res.details!.id }), {
      token: t.adminPat,
    });
    expect(got.provider!.provider!.senderAddress).toBe(`${protocol}@example.com`);
    await call(protocol, t.url, S, S.method.deleteSMTPProvider, create(S.method.deleteSMTPProvider.input, { id: res.details!.id }), { token: t.adminPat });
  });
});

describe("SMS providers", () => {
  it("HTTP: the signing key is returned once; the test message is POSTed as signed JSON", async () => {
    const created = await rest(t.url, "POST", "/resources/v3alpha/sms_providers", { token: t.adminPat, body: { description: "gw", http: { url: sms.url } } });
    expect(created.status).toBe(201);
    const key = created.body.signingKey;
    expect(key).toMatch(/^[\w-]{43}$/);
    const id = created.body.details.id;
    const got = await rest(t.url, "GET", `/resources/v3alpha/sms_providers/${id}`, { token: t.adminPat });
    expect(got.body.provider.provider).toEqual({ description: "gw", http: { url: sms.url } });
    expect(JSON.stringify(got.body)).not.toContain(key);

    const tested = await rest(t.url, "POST", `/resources/v3alpha/sms_providers/${id}/_test`, { token: t.adminPat, body: { receiverPhone: "+41790000001" } });
    expect(tested.status).toBe(200);
    const [r] = await sms.waitFor(1);
    expect(r!.body).toMatchObject({ recipient: "+41790000001", language: "en" });
    expect(r!.body.text).toMatch(/test message/);
    expect(verifySignature(key, r!.signature, r!.raw)).toBe(true);
    expect(verifySignature("another key", r!.signature, r!.raw)).toBe(false);

    // an endpoint answering 500: FAILED_PRECONDITION naming the status
    sms.behaviour = () => ({ status: 500 });
    const failed = await rest(t.url, "POST", `/resources/v3alpha/sms_providers/${id}/_test`, { token: t.adminPat, body: { receiverPhone: "+41790000001" } });
    sms.behaviour = () => {};
    expect(failed.status).toBe(400);
    expect(failed.body.message).toContain("HTTP 500");
    await api.deleteSMSProvider({ id });
  });

  it("a provider whose type changes gets a secret of that type: HTTP a new signing key, Twilio the token it must be given", async () => {
    const twilio = { case: "twilio" as const, value: { sid: "AC9", token: "tw-secret", senderNumber: "+15550001", baseUrl: "http://127.0.0.1:9" } };
    const id = (await api.createSMSProvider({ provider: { description: "switch", providerType: twilio } })).details!.id;
    // to HTTP: a new key, returned once, signs what the endpoint receives (not the former Twilio token)
    const toHttp = await api.patchSMSProvider({ id, provider: { providerType: { case: "http", value: { url: sms.url } } } });
    expect(toHttp.signingKey).toMatch(/^[\w-]{43}$/);
    const before = sms.received.length;
    await api.testSMSProvider({ id, receiverPhone: "+41790000004" });
    const [r] = (await sms.waitFor(before + 1)).slice(before);
    expect(verifySignature(toHttp.signingKey, r!.signature, r!.raw)).toBe(true);
    expect(verifySignature("tw-secret", r!.signature, r!.raw)).toBe(false);
    // staying HTTP makes no new key
    expect((await api.patchSMSProvider({ id, provider: { providerType: { case: "http", value: { url: sms.url } } } })).signingKey).toBe("");
    // back to Twilio without a token: refused naming it (the signing key is no Twilio token), nothing changed
    const { token: _, ...tokenless } = twilio.value;
    const refused = await rest(t.url, "PATCH", `/resources/v3alpha/sms_providers/${id}`, { token: t.adminPat, body: { twilio: tokenless } });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain("provider.twilio.token");
    expect((await api.getSMSProvider({ id })).provider!.provider!.providerType.case).toBe("http");
    await api.patchSMSProvider({ id, provider: { providerType: twilio } });
    expect((await api.getSMSProvider({ id })).provider!.provider!.providerType.case).toBe("twilio");
    await api.deleteSMSProvider({ id });
  });

  it("Twilio: the Messages API at the configured base URL, basic auth with the stored token; a patch without a token keeps it", async () => {
    const raw: { url: string; auth: string; body: string }[] = [];
    // A Twilio stand-in: record the request line and headers too.
    const http = await import("node:http");
    const srv = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        raw.push({ url: req.url ?? "", auth: req.headers.authorization ?? "", body });
        res.writeHead(201, { "content-type": "application/json" });
        res.end("{}");
      });
    });
    await new Promise<void>((ok) => srv.listen(0, "127.0.0.1", ok));
    const base = `http://127.0.0.1:${(srv.address() as { port: number }).port}`;
    try {
      const created = await api.createSMSProvider({
        provider: { description: "tw", providerType: { case: "twilio", value: { sid: "AC123", token: "tw-token", senderNumber: "+15550001", baseUrl: base } } },
      });
      expect(created.signingKey).toBe("");
      const id = created.details!.id;
      const got = await api.getSMSProvider({ id });
      expect(got.provider!.provider!.providerType).toMatchObject({
        case: "twilio",
        value: { sid: "AC123", token: "", senderNumber: "+15550001", baseUrl: base },
      });
      await api.testSMSProvider({ id, receiverPhone: "+41790000002" });
      expect(raw).toHaveLength(1);
      expect(raw[0]!.url).toBe("/2010-04-01/Accounts/AC123/Messages.json");
      expect(raw[0]!.auth).toBe(`Basic ${Buffer.from("AC123:tw-token").toString("base64")}`);
      const form = new URLSearchParams(raw[0]!.body);
      expect([form.get("To"), form.get("From")]).toEqual(["+41790000002", "+15550001"]);
      expect(form.get("Body")).toMatch(/test message/);

      // a patch with an empty token keeps the stored one
      await api.patchSMSProvider({ id, provider: { providerType: { case: "twilio", value: { sid: "AC123", senderNumber: "+15550009", baseUrl: base } } } });
      await api.testSMSProvider({ id, receiverPhone: "+41790000002" });
      expect(raw[1]!.auth).toBe(`Basic ${Buffer.from("AC123:tw-token").toString("base64")}`);
      expect(new URLSearchParams(raw[1]!.body).get("From")).toBe("+15550009");

      await api.activateSMSProvider({ id });
      expect((await t.server.notificationProviders.active(t.instanceId, "sms"))?.providerType).toBe("twilio");
      await expectCode(api.activateSMTPProvider({ id }), Code.NotFound);
    } finally {
      srv.close();
    }
  });

  it("SMTP servers obey SVC_TARGET_DENY: an address at creation and patch, a name after DNS at each send", async () => {
    for (const host of ["169.254.169.254", "2852039166", "[::ffff:a9fe:a9fe]", "0.0.0.0"]) {
      const created = await rest(t.url, "POST", "/resources/v3alpha/smtp_providers", { token: t.adminPat, body: smtp({ host }) });
      expect(created.status, host).toBe(400);
      expect(created.body.message, host).toMatch(/provider\.host: must not point at .*SVC_TARGET_DENY/);
    }
    const id = (await rest(t.url, "POST", "/resources/v3alpha/smtp_providers", { token: t.adminPat, body: smtp() })).body.details.id;
    const patched = await rest(t.url, "PATCH", `/resources/v3alpha/smtp_providers/${id}`, { token: t.adminPat, body: { host: "169.254.169.254" } });
    expect(patched.status).toBe(400);
    expect(patched.body.message).toContain("provider.host");

    // A server that denies loopback: the name "localhost" is accepted, and refused once it resolves to 127.0.0.1.
    const strict = await startTestServer({ SVC_TARGET_DENY: "link-local,unspecified,loopback" });
    try {
      const body = smtp({ host: "localhost" });
      const made = await rest(strict.url, "POST", "/resources/v3alpha/smtp_providers", { token: strict.adminPat, body });
      expect(made.status).toBe(201);
      const before = mail.received.length;
      const tested = await rest(strict.url, "POST", `/resources/v3alpha/smtp_providers/${made.body.details.id}/_test`, {
        token: strict.adminPat,
        body: { receiverAddress: "admin@example.com" },
      });
      expect(tested.status).toBe(400);
      expect(tested.body.message).toMatch(/resolves to 127\.0\.0\.1, which is denied by SVC_TARGET_DENY \(loopback\)/);
      expect(tested.body.message).not.toContain("s3cret-pw");
      expect(mail.received).toHaveLength(before);
      // The same provider on a server that allows loopback delivers (through the same checked connection).
      const allowed = await rest(t.url, "POST", "/resources/v3alpha/smtp_providers", { token: t.adminPat, body });
      const sent = await rest(t.url, "POST", `/resources/v3alpha/smtp_providers/${allowed.body.details.id}/_test`, {
        token: t.adminPat,
        body: { receiverAddress: "admin@example.com" },
      });
      expect(sent.status).toBe(200);
      expect(mail.received).toHaveLength(before + 1);
    } finally {
      await strict.close();
    }
  });

  it("SMS provider URLs obey SVC_TARGET_DENY: the metadata address is refused, naming the field", async () => {
    const sms = (body: object) => rest(t.url, "POST", "/resources/v3alpha/sms_providers", { token: t.adminPat, body });
    const http = await sms({ http: { url: "http://169.254.169.254/latest/meta-data" } });
    expect(http.status).toBe(400);
    expect(http.body.message).toContain("provider.http.url");
    const twilio = await sms({ twilio: { sid: "AC1", token: "x", senderNumber: "+15550001", baseUrl: "http://[::ffff:a9fe:a9fe]" } });
    expect(twilio.status).toBe(400);
    expect(twilio.body.message).toContain("provider.twilio.base_url");
  });
});
