import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OrganizationDomainService, SearchOrganizationDomainsRequestSchema } from "../../gen/svc/resources/org/v3alpha/org_domain_service_pb.js";
import { call, rest } from "../support/clients.js";
import { DnsServer } from "../support/dns.js";
import { mailsTo, startMessagingServer } from "../support/messaging.js";
import type { TestServer } from "../support/server.js";
import { decodedMail, type MailServer } from "../support/smtp.js";

// Organisation domains: added, validated by a file over HTTP and by a DNS TXT record against local servers, made
// primary, claimed from other organisations, and the domain settings that govern them.
let t: TestServer;
let mail: MailServer;
let close: () => Promise<void>;
let dns: DnsServer;
let web: Server;
let webPort = 0;
/** What the challenge web server serves: Host (without port) + path -> body. */
const files = new Map<string, string>();
const seenHosts: string[] = [];
const PASSWORD = "Secr3t!pass";

beforeAll(async () => {
  dns = await new DnsServer().start();
  web = createServer((req, res) => {
    const host = (req.headers.host ?? "").replace(/:\d+$/, "");
    seenHosts.push(host);
    const body = files.get(`${host}${req.url}`);
    if (body === undefined) res.writeHead(404).end("not here");
    else res.writeHead(200, { "content-type": "text/plain" }).end(body);
  });
  await new Promise<void>((ok) => web.listen(0, "127.0.0.1", ok));
  webPort = (web.address() as AddressInfo).port;
  ({ t, mail, close } = await startMessagingServer({
    // the challenge server is on loopback; the metadata address stays denied (test/security/outbound-default.test.ts: the default)
    SVC_TARGET_DENY: "link-local,unspecified",
    SVC_DOMAIN_VALIDATION_DNS: `127.0.0.1:${dns.port}`,
    SVC_DOMAIN_VALIDATION_HTTP: `http://{domain}:${webPort}`,
  }));
});
afterAll(async () => {
  await close?.();
  await dns?.stop();
  await new Promise((ok) => web?.close(ok));
});

const api = (method: string, path: string, body?: unknown, token = t.adminPat) => rest(t.url, method, path, { token, ...(body ? { body } : {}) });
const ok = async (p: ReturnType<typeof api>, status = 200) => {
  const r = await p;
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  return r.body;
};
const domains = (orgId: string) => `/resources/v3alpha/organizations/${orgId}/domains`;
const list = async (orgId: string) =>
  (await ok(api("POST", `${domains(orgId)}/_search`, { query: { asc: true } }))).result as {
    domain: string;
    isVerified: boolean;
    isPrimary: boolean;
    isGenerated: boolean;
  }[];

async function human(orgId: string, username: string, email = `${username.replace(/@.*/, "")}@mail.example`) {
  const body = {
    username,
    human: { profile: { givenName: "Dom", familyName: "Ain" }, email: { address: email, isVerified: true }, password: { password: PASSWORD } },
  };
  return (await ok(api("POST", `/resources/v3alpha/users?ctx.org_id=${orgId}`, body), 201)).details.id as string;
}

/** Whether `loginName` with the password opens a session (the sessions API resolves login names as the login UI does). */
async function signsIn(loginName: string) {
  const r = await api("POST", "/resources/v3alpha/sessions", { checks: { user: { loginName }, password: { password: PASSWORD } } });
  return r.status === 201;
}

async function generate(orgId: string, domain: string, type: "HTTP" | "DNS") {
  return ok(api("POST", `${domains(orgId)}/${domain}/_generate_validation`, { type: `DOMAIN_VALIDATION_TYPE_${type}` }));
}

describe("organisation domains", () => {
  it("starts with the generated domain; added domains wait for validation by a file over HTTP", async () => {
    const org = await t.org("Http Validators");
    expect(await list(org)).toEqual([expect.objectContaining({ domain: "http-validators.localhost", isVerified: true, isPrimary: true, isGenerated: true })]);

    const added = await ok(api("POST", domains(org), { domain: "Acme-HTTP.test" }), 201);
    expect(added.isVerified).toBe(false);
    expect((await api("POST", domains(org), { domain: "acme-http.test" })).status).toBe(409);
    const bad = await api("POST", domains(org), { domain: "not a domain" });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain("invalid domain");
    expect((await api("POST", domains(org), { domain: "127.0.0.1" })).body.message).toContain("not an address");

    // Neither primary nor validated before a validation is generated and found.
    expect((await api("POST", `${domains(org)}/acme-http.test/_set_as_primary`)).body.message).toContain("not verified");
    expect((await api("POST", `${domains(org)}/acme-http.test/_validate`)).body.message).toContain("generate one first");

    const v = await generate(org, "acme-http.test", "HTTP");
    expect(v.url).toBe(`http://acme-http.test:${webPort}/.well-known/svc-challenge/${v.token}.txt`);
    dns.records.set("acme-http.test", { a: ["127.0.0.1"] });
    const missing = await api("POST", `${domains(org)}/acme-http.test/_validate`);
    expect(missing.status).toBe(400);
    expect(missing.body.message).toContain("answered HTTP 404");
    // The host of the check is the domain (resolved by the configured DNS server), the file holds the token.
    expect(seenHosts).toContain("acme-http.test");
    files.set(`acme-http.test/.well-known/svc-challenge/${v.token}.txt`, "something else");
    expect((await api("POST", `${domains(org)}/acme-http.test/_validate`)).body.message).toContain("does not hold the token");
    files.set(`acme-http.test/.well-known/svc-challenge/${v.token}.txt`, `${v.token}\n`);
    await ok(api("POST", `${domains(org)}/acme-http.test/_validate`));
    expect((await ok(api("GET", `${domains(org)}/acme-http.test`))).domain).toMatchObject({
      domain: "acme-http.test",
      isVerified: true,
      isPrimary: false,
      validationType: "DOMAIN_VALIDATION_TYPE_HTTP",
    });
    // A verified domain cannot be validated again.
    expect((await api("POST", `${domains(org)}/acme-http.test/_generate_validation`, { type: "DOMAIN_VALIDATION_TYPE_DNS" })).status).toBe(400);
  });

  it("validates by a DNS TXT record; a name resolving to a denied address is not fetched", async () => {
    const org = await t.org("Dns Validators");
    await ok(api("POST", domains(org), { domain: "acme-dns.test" }), 201);
    const v = await generate(org, "acme-dns.test", "DNS");
    expect(v.dnsName).toBe("_svc-challenge.acme-dns.test");
    expect((await api("POST", `${domains(org)}/acme-dns.test/_validate`)).body.message).toContain("no TXT record");
    dns.records.set("_svc-challenge.acme-dns.test", { txt: ["v=spf1 -all"] });
    const wrong = await api("POST", `${domains(org)}/acme-dns.test/_validate`);
    expect(wrong.body.message).toContain("no TXT record at _svc-challenge.acme-dns.test holds the token");
    // A newer validation replaces the token: the old one no longer counts.
    const newer = await generate(org, "acme-dns.test", "DNS");
    dns.records.set("_svc-challenge.acme-dns.test", { txt: ["v=spf1 -all", v.token] });
    expect((await api("POST", `${domains(org)}/acme-dns.test/_validate`)).status).toBe(400);
    dns.records.set("_svc-challenge.acme-dns.test", { txt: ["v=spf1 -all", newer.token] });
    await ok(api("POST", `${domains(org)}/acme-dns.test/_validate`));
    expect((await list(org)).find((d) => d.domain === "acme-dns.test")?.isVerified).toBe(true);

    // SSRF: the cloud metadata address (link-local, denied by default and by the narrower list) is never connected to.
    await ok(api("POST", domains(org), { domain: "metadata.test" }), 201);
    dns.records.set("metadata.test", { a: ["169.254.169.254"] });
    await generate(org, "metadata.test", "HTTP");
    const denied = await api("POST", `${domains(org)}/metadata.test/_validate`);
    expect(denied.status).toBe(400);
    expect(denied.body.message).toContain("is denied by SVC_TARGET_DENY (link-local)");
  });

  it("a verified domain makes login names, can become primary, and with user_login_must_be_domain is required", async () => {
    const org = await t.org("Login Domains");
    await human(org, "dora");
    await ok(api("POST", domains(org), { domain: "dora.test" }), 201);
    // Not verified: no login name with it.
    expect(await signsIn("dora@dora.test")).toBe(false);
    const v = await generate(org, "dora.test", "DNS");
    dns.records.set("_svc-challenge.dora.test", { txt: [v.token] });
    await ok(api("POST", `${domains(org)}/dora.test/_validate`));
    expect(await signsIn("dora@dora.test")).toBe(true);
    expect(await signsIn("dora@login-domains.localhost")).toBe(true);
    expect(await signsIn("dora")).toBe(true);

    await ok(api("POST", `${domains(org)}/dora.test/_set_as_primary`));
    expect((await ok(api("GET", `/resources/v3alpha/organizations/${org}`))).organization.primaryDomain).toBe("dora.test");
    expect((await api("DELETE", `${domains(org)}/dora.test`)).body.message).toContain("primary");
    expect((await api("DELETE", `${domains(org)}/login-domains.localhost`)).body.message).toContain("generated");
    // A rename moves the generated domain; the primary stays.
    await ok(api("PATCH", `/resources/v3alpha/organizations/${org}`, { name: "Login Domains Renamed" }));
    const after = await list(org);
    expect(after.map((d) => [d.domain, d.isPrimary, d.isGenerated])).toEqual(
      expect.arrayContaining([
        ["dora.test", true, false],
        ["login-domains-renamed.localhost", false, true],
      ]),
    );
    expect(after).toHaveLength(2);
    // The request context may name the organisation by any verified domain.
    const byDomain = await ok(api("POST", "/resources/v3alpha/users/_search?ctx.org_domain=dora.test", {}));
    expect(byDomain.result.map((u: { username: string }) => u.username)).toEqual(["dora"]);

    await ok(api("PATCH", `/settings/v3alpha/domain?ctx.org_id=${org}`, { userLoginMustBeDomain: { set: true } }));
    expect(await signsIn("dora")).toBe(false);
    expect(await signsIn("dora@dora.test")).toBe(true);
    const resolved = await ok(api("GET", `/settings/v3alpha/domain?ctx.org_id=${org}`));
    expect(resolved.settings.userLoginMustBeDomain.value).toBe(true);
    expect(resolved.settings.validateOrgDomains).toMatchObject({ value: true });
  });

  it("verifying a domain claims it: another organisation's entry goes, its users named …@domain are renamed and mailed", async () => {
    const a = await t.org("Claimer A");
    const b = await t.org("Holder B");
    const carol = await human(b, "carol@claimed.test", "carol@inbox.example");
    await ok(api("POST", domains(b), { domain: "claimed.test" }), 201);
    await ok(api("POST", domains(a), { domain: "claimed.test" }), 201);
    const v = await generate(a, "claimed.test", "DNS");
    dns.records.set("_svc-challenge.claimed.test", { txt: [v.token] });
    await ok(api("POST", `${domains(a)}/claimed.test/_validate`));

    expect((await list(b)).map((d) => d.domain)).not.toContain("claimed.test");
    const renamed = (await ok(api("GET", `/resources/v3alpha/users/${carol}`))).user;
    expect(renamed.username).toBe(`${carol}@temporary.localhost`);
    const [m] = await mailsTo(mail, "carol@inbox.example");
    const text = decodedMail(m!.raw);
    expect(text).toContain("Your username has changed");
    expect(text).toContain(`${carol}@temporary.localhost`);
    // Verified in A: nobody else may add or verify it.
    expect((await api("POST", domains(b), { domain: "claimed.test" })).status).toBe(409);
  });

  it("validate_org_domains off verifies at once; SMTP senders may be tied to the instance's domains", async () => {
    const org = await t.org("Trusting Org");
    await ok(api("PATCH", `/settings/v3alpha/domain?ctx.org_id=${org}`, { validateOrgDomains: { set: false } }));
    expect((await ok(api("POST", domains(org), { domain: "trusted.test" }), 201)).isVerified).toBe(true);

    await ok(api("PATCH", "/settings/v3alpha/domain", { smtpSenderAddressMatchesInstanceDomain: { set: true } }));
    const smtp = (senderAddress: string) =>
      api("POST", "/resources/v3alpha/smtp_providers", { host: "127.0.0.1", port: 25, tls: "SMTP_TLS_MODE_NONE", senderAddress });
    const refused = await smtp("iam@elsewhere.example");
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain("provider.sender_address");
    expect((await smtp("iam@localhost")).status).toBe(201);
    await ok(api("PATCH", "/settings/v3alpha/domain", { smtpSenderAddressMatchesInstanceDomain: { reset: true } }));
  });

  it("is checked in the organisation it names; gRPC; the export carries the domains", async () => {
    const org = await t.org("Guarded Domains");
    const other = await t.org("Other Org");
    const ownerOther = await t.serviceUser("dom-owner-other", [{ type: "org", id: other, roles: ["ORG_OWNER"] }], other);
    expect((await api("POST", domains(org), { domain: "guarded.test" }, ownerOther.token)).status).toBe(403);
    expect((await api("POST", `${domains(org)}/_search`, {}, ownerOther.token)).status).toBe(403);
    expect((await api("POST", `/resources/v3alpha/organizations/nope/domains/_search`, {})).status).toBe(404);

    await ok(api("PATCH", `/settings/v3alpha/domain?ctx.org_id=${org}`, { validateOrgDomains: { set: false } }));
    await ok(api("POST", domains(org), { domain: "guarded.test" }), 201);
    await ok(api("POST", `${domains(org)}/guarded.test/_set_as_primary`));
    const grpc = await call(
      "grpc",
      t.url,
      OrganizationDomainService,
      OrganizationDomainService.method.searchOrganizationDomains,
      create(SearchOrganizationDomainsRequestSchema, { organizationId: org, verifiedOnly: true, domainContains: "GUARDED.T" }),
      { token: t.adminPat },
    );
    expect(grpc.result.map((d) => [d.domain, d.isPrimary])).toEqual([["guarded.test", true]]);

    const exported = await ok(api("POST", "/admin/v1/export", { orgIds: [org], responseOutput: true }));
    expect(exported.orgs[0].domains).toEqual(
      expect.arrayContaining([
        { orgId: org, domainName: "guarded.test", isVerified: true, isPrimary: true },
        { orgId: org, domainName: "guarded-domains.localhost", isVerified: true, isPrimary: false },
      ]),
    );
  });
});
