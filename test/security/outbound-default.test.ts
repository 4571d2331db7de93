import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ActionService } from "../../gen/svc/resources/action/v3alpha/action_service_pb.js";
import { LanguageSettingsService } from "../../gen/svc/settings/language/v3alpha/language_service_pb.js";
import { loadConfig } from "../../src/config/config.js";
import { TargetAddressPolicy } from "../../src/domain/target-addresses.js";
import { systemResolve } from "../../src/net/outbound-http.js";
import { connectClient, expectCode, rest } from "../support/clients.js";
import { DnsServer } from "../support/dns.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * Safe by default (security review, "Informational"): with SVC_TARGET_DENY unset, nothing the server calls for its
 * users (targets, SMS providers, SMTP hosts, S3 endpoints, domain validation) reaches loopback or private
 * addresses, whether written as an address (refused when set) or reached through a name (refused after DNS, in
 * the connection's own lookup). Every refusal names the variable and the way out.
 */

const DEFAULT = "loopback,private,link-local,unspecified";
/** An empty value counts as unset, so the server gets the default (test/support/server.ts sets "none" for other suites). */
const AS_DEFAULT = "";
const WAY_OUT = "; set SVC_TARGET_DENY=none or a narrower list for development";
const LANG = "svc.settings.language.v3alpha.LanguageSettingsService";

describe("the default of SVC_TARGET_DENY", () => {
  it("denies loopback, private, link-local and unspecified addresses; none and narrower lists still work", () => {
    expect(loadConfig({}, []).targetDeny).toBe(DEFAULT);
    expect(loadConfig({ SVC_TARGET_DENY: AS_DEFAULT }, []).targetDeny).toBe(DEFAULT);
    const p = new TargetAddressPolicy(loadConfig({}, []).targetDeny);
    for (const a of ["127.0.0.1", "::1", "10.0.0.1", "172.16.0.1", "192.168.1.1", "100.64.0.1", "fd00::1", "169.254.169.254", "0.0.0.0", "::ffff:127.0.0.1"]) {
      expect(p.denies(a), a).toBe(true);
    }
    expect(p.denies("93.184.216.34")).toBe(false);
    expect(new TargetAddressPolicy(loadConfig({ SVC_TARGET_DENY: "none" }, []).targetDeny).denies("127.0.0.1")).toBe(false);
    expect(new TargetAddressPolicy(loadConfig({ SVC_TARGET_DENY: "link-local" }, []).targetDeny).denies("10.0.0.1")).toBe(false);
  });
});

describe("a server with the default does not reach its own network", () => {
  let t: TestServer;
  let dns: DnsServer;
  /** A loopback HTTP server that counts connections: any connection means a refused call got through. */
  let local: Server;
  let localPort = 0;
  let connections = 0;
  /** Names only this test's resolver knows; other names (`localhost`) resolve as the system resolves them. */
  const names = new Map([["local.test", [{ address: "127.0.0.1", family: 4 }]]]);
  const resolveHost = async (hostname: string) => names.get(hostname) ?? systemResolve(hostname);

  beforeAll(async () => {
    local = createServer((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
    local.on("connection", () => connections++);
    await new Promise<void>((ok) => local.listen(0, "127.0.0.1", ok));
    localPort = (local.address() as AddressInfo).port;
    dns = await new DnsServer().start();
    dns.records.set("loopback.test", { a: ["127.0.0.1"] });
    t = await startTestServer(
      {
        SVC_TARGET_DENY: AS_DEFAULT,
        // the DNS server is the operator's (not checked); the host it names for the file is checked after DNS
        SVC_DOMAIN_VALIDATION_DNS: `127.0.0.1:${dns.port}`,
        SVC_DOMAIN_VALIDATION_HTTP: `http://{domain}:${localPort}`,
      },
      { resolveHost },
    );
  });
  afterAll(async () => {
    await t?.close();
    await dns?.stop();
    await new Promise((ok) => local?.close(ok));
  });

  const api = (method: string, path: string, body: unknown) => rest(t.url, method, path, { token: t.adminPat, body });
  let n = 0;
  const createTarget = (url: string) =>
    api("POST", "/resources/v3alpha/targets", { name: `default-${n++}`, restWebhook: { url }, timeout: "3s", interruptOnError: true });

  it("refuses targets at loopback and private addresses when created, naming the field and the variable (REST and Connect)", async () => {
    for (const [url, address, item] of [
      ["http://127.0.0.1:22/", "127.0.0.1", "loopback"],
      ["http://[::1]:5432/", "::1", "loopback"],
      ["http://10.0.0.1/", "10.0.0.1", "private"],
    ] as const) {
      const r = await createTarget(url);
      expect(r.status, url).toBe(400);
      expect(r.body.code, url).toBe(Code.InvalidArgument);
      expect(r.body.message, url).toContain(
        `invalid target.rest_webhook.url: must not point at ${address}, which is denied by SVC_TARGET_DENY (${item})${WAY_OUT}`,
      );
    }
    const actions = connectClient(ActionService, t.url, t.adminPat);
    const err = await expectCode(
      actions.createTarget({
        target: { name: "grpc-loopback", targetType: { case: "restWebhook", value: { url: "http://127.0.0.1:22/" } }, timeout: { seconds: 1n } },
      }),
      Code.InvalidArgument,
    );
    expect(err.rawMessage).toMatch(/target\.rest_webhook\.url: .*denied by SVC_TARGET_DENY \(loopback\)/);
  });

  it("refuses at call time a target whose name resolves to loopback: the call never reaches the local server", async () => {
    for (const host of ["local.test", "localhost"]) {
      const created = await createTarget(`http://${host}:${localPort}/hook`);
      expect(created.status, JSON.stringify(created.body)).toBe(201); // a name may resolve elsewhere where the server runs
      const x = await api("POST", "/resources/v3alpha/executions", {
        condition: { request: { method: `/${LANG}/ResolveLanguages` } },
        targets: [created.body.details.id],
      });
      expect(x.status, JSON.stringify(x.body)).toBeLessThan(300);
      const err = await expectCode(connectClient(LanguageSettingsService, t.url, t.adminPat).resolveLanguages({}), Code.FailedPrecondition);
      expect(err.rawMessage, host).toMatch(/it resolves to (127\.0\.0\.1|::1), which is denied by SVC_TARGET_DENY \(loopback\); set SVC_TARGET_DENY=none/);
    }
    expect(connections).toBe(0);
    // the execution goes, so that later cases of this file call nothing through it
    await api("POST", "/resources/v3alpha/executions", { condition: { request: { method: `/${LANG}/ResolveLanguages` } }, targets: [] });
  });

  it("domain validation: a domain that resolves to loopback is not fetched", async () => {
    const org = await t.org("Loopback Domains");
    const domains = `/resources/v3alpha/organizations/${org}/domains`;
    expect((await api("POST", domains, { domain: "loopback.test" })).status).toBe(201);
    expect((await api("POST", `${domains}/loopback.test/_generate_validation`, { type: "DOMAIN_VALIDATION_TYPE_HTTP" })).status).toBe(200);
    const r = await api("POST", `${domains}/loopback.test/_validate`, {});
    expect(r.status).toBe(400);
    expect(r.body.message).toContain(`resolves to 127.0.0.1, which is denied by SVC_TARGET_DENY (loopback)${WAY_OUT}`);
    expect(connections).toBe(0);
  });

  it("SMS and SMTP providers: a loopback address is refused when set, a name after DNS at the send", async () => {
    const literal = await api("POST", "/resources/v3alpha/sms_providers", { http: { url: `http://127.0.0.1:${localPort}/sms` } });
    expect(literal.status).toBe(400);
    expect(literal.body.message).toMatch(/provider\.http\.url: .*denied by SVC_TARGET_DENY \(loopback\)/);
    const smtp = await api("POST", "/resources/v3alpha/smtp_providers", {
      host: "127.0.0.1",
      port: localPort,
      tls: "SMTP_TLS_MODE_NONE",
      senderAddress: "iam@example.com",
    });
    expect(smtp.status).toBe(400);
    expect(smtp.body.message).toMatch(/provider\.host: .*denied by SVC_TARGET_DENY \(loopback\)/);

    const named = await api("POST", "/resources/v3alpha/sms_providers", { http: { url: `http://local.test:${localPort}/sms` } });
    expect(named.status, JSON.stringify(named.body)).toBe(201);
    const tested = await api("POST", `/resources/v3alpha/sms_providers/${named.body.details.id}/_test`, { receiverPhone: "+41790000001" });
    expect(tested.status).toBe(400);
    expect(tested.body.message).toContain(`the SMS provider resolves to 127.0.0.1, which is denied by SVC_TARGET_DENY (loopback)${WAY_OUT}`);
    expect(connections).toBe(0);
  });

  it("S3: an endpoint at loopback is refused as an address and as a name after DNS", async () => {
    const org = await t.org("Exported");
    const exportTo = (endpoint: string) =>
      api("POST", "/admin/v1/export", {
        org_ids: [org],
        timeout: "1m",
        s3_output: { endpoint, access_key_id: "k", secret_access_key: "s", ssl: false, bucket: "exports", path: "x.json" },
      });
    const literal = await exportTo(`127.0.0.1:${localPort}`);
    expect(literal.status).toBe(400);
    expect(literal.body.message).toMatch(/s3_output\.endpoint: .*denied by SVC_TARGET_DENY \(loopback\)/);
    const named = await exportTo(`localhost:${localPort}`);
    expect(named.status).toBe(400);
    expect(named.body.message).toMatch(
      /s3 storage endpoint resolves to (127\.0\.0\.1|::1), which is denied by SVC_TARGET_DENY \(loopback\); set SVC_TARGET_DENY=none/,
    );
    expect(connections).toBe(0);
  });
});
