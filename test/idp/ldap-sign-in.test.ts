import net from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TargetAddressPolicy } from "../../src/domain/target-addresses.js";
import { DirectoryUnreachable, LdapFederation, type LdapSettings } from "../../src/federation/ldap.js";
import { OutboundHttp } from "../../src/net/outbound-http.js";
import { launchChromium } from "../support/browser.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { type Slapd, slapdAvailable, startSlapd } from "../support/slapd.js";
import { newPage } from "../oidc/rp.js";

/**
 * Sign-in through an LDAP directory (Debian's slapd, started here with its own CA): the login UI's form, ldaps://
 * and StartTLS with certificate checks, servers in order, the timeout, escaping, and wrong passwords counted as
 * local ones are.
 */
let t: TestServer;
let ldap: Slapd;
let browser: Browser;

const api = (method: string, path: string, body?: unknown) =>
  rest(t.url, method, `/resources/v3alpha${path}`, { token: t.adminPat, ...(body ? { body } : {}) });

const attributes = {
  id_attribute: "uid",
  first_name_attribute: "givenName",
  last_name_attribute: "sn",
  display_name_attribute: "cn",
  preferred_username_attribute: "uid",
  email_attribute: "mail",
};

function config(over: Record<string, unknown> = {}) {
  return {
    servers: [ldap.ldapsUrl],
    base_dn: ldap.baseDn,
    bind_dn: ldap.bindDn,
    bind_password: ldap.bindPassword,
    user_base: ldap.userBase,
    user_object_classes: ["inetOrgPerson"],
    user_filters: ["uid", "mail"],
    timeout: "5s",
    attributes,
    root_ca: ldap.caPem,
    ...over,
  };
}

async function createDirectory(name: string, options: Record<string, unknown>, over: Record<string, unknown> = {}) {
  const r = await api("POST", "/idps/ldap", { idp: { name, options }, config: config(over) });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.details.id as string;
}

/** The login page's button of the directory, its form, and the page that answers it (status and text). */
async function signInAt(page: Page, directory: string, login: string, password: string) {
  await page.goto(`${t.url}/ui/login?prompt=login`);
  await page.click(`button.idp:has-text("${directory}")`);
  await page.fill("input[name=loginName]", login);
  await page.fill("input[name=password]", password);
  const [answer] = await Promise.all([page.waitForResponse((r) => r.url().endsWith("/ui/login/ldap")), page.click("button[type=submit]")]);
  return { status: answer.status(), text: (await page.textContent("main")) ?? "" };
}

const deactivate = (id: string) => api("PATCH", `/idps/ldap/${id}`, { idp: { state_policy: "STATE_POLICY_DEACTIVATE" } });
const userNamed = (loginName: string) => t.server.db.prisma.user.findFirst({ where: { instanceId: t.instanceId, loginName } });

beforeAll(async () => {
  if (!slapdAvailable) return;
  ldap = await startSlapd();
  t = await startTestServer();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await ldap?.stop();
});

describe.skipIf(!slapdAvailable)("sign-in through an LDAP directory", () => {
  it("validates the configuration, keeps the bind password write-only and shows the root CA", async () => {
    const bad = await api("POST", "/idps/ldap", { idp: { name: "Bad" }, config: config({ servers: ["http://x.example"] }) });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/servers/);
    const id = await createDirectory("Shown", {});
    const got = await api("GET", `/idps/ldap/${id}`);
    expect(got.body.idp.idp.config).toMatchObject({ hasBindPassword: true, rootCa: ldap.caPem, userBase: ldap.userBase });
    expect(JSON.stringify(got.body)).not.toContain(ldap.bindPassword);
    await api("DELETE", `/idps/${id}`);
  });

  it("the form signs in over ldaps:// with the provider's CA; auto-creation makes a linked account from the entry", async () => {
    const id = await createDirectory("Corp Directory", { isAutoCreation: true });
    const { page, ctx } = await newPage(browser);
    const { status, text } = await signInAt(page, "Corp Directory", "alice", "alice-Secret-1");
    expect(status, text).toBeLessThan(400);
    const alice = (await userNamed("alice"))!;
    expect(alice).toMatchObject({ email: "alice@ldap.example.com", emailVerified: false, givenName: expect.any(String), familyName: expect.any(String) });
    expect(await t.server.db.prisma.userIdpLink.findMany({ where: { userId: alice.id } })).toMatchObject([{ idpId: id, externalUserId: "alice" }]);
    // by e-mail address too (user_filters), as the same account
    const { page: again } = await newPage(browser);
    expect((await signInAt(again, "Corp Directory", "alice@ldap.example.com", "alice-Secret-1")).status).toBeLessThan(400);
    expect(await t.server.db.prisma.user.count({ where: { instanceId: t.instanceId, loginName: "alice" } })).toBe(1);
    // no bind password in any event
    const payloads = JSON.stringify((await t.server.db.prisma.event.findMany({ where: { instanceId: t.instanceId } })).map((e) => e.payload));
    expect(payloads).not.toContain(ldap.bindPassword);
    await ctx.close();
    await again.context().close();
    await deactivate(id);
  });

  it("answers an intent of the intents API at once, with the linked user; a wrong password is refused", async () => {
    const id = await createDirectory("Intent Directory", {});
    const loginClient = (await t.serviceUser("ldap-login-client", [{ type: "instance", id: t.instanceId, roles: ["IAM_LOGIN_CLIENT"] }])).token;
    const start = (password: string) =>
      rest(t.url, "POST", "/resources/v3alpha/idp_intents", { token: loginClient, body: { idp_id: id, ldap: { username: "alice", password } } });
    const ok = await start("alice-Secret-1");
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    const { idpIntentId, idpIntentToken, userId } = ok.body.idpIntent;
    expect(userId ?? "").toBe(""); // alice is linked to the first directory, not to this one
    const got = await rest(t.url, "POST", `/resources/v3alpha/idp_intents/${idpIntentId}/_retrieve`, {
      token: loginClient,
      body: { idp_intent_token: idpIntentToken },
    });
    expect(got.body.idpInformation).toMatchObject({ idpId: id, userId: "alice", rawInformation: { mail: "alice@ldap.example.com" } });
    expect(JSON.stringify(got.body)).not.toMatch(/userPassword|SSHA/i);
    const wrong = await start("nope");
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toMatch(/ldap/);
    // wrong passwords through the API count toward the linked account's lockout as the form's do
    const alice = (await userNamed("alice"))!;
    await rest(t.url, "POST", `/resources/v3alpha/users/${alice.id}/idp_links`, { token: t.adminPat, body: { idp_id: id, user_id: "alice" } });
    await rest(t.url, "PATCH", "/settings/v3alpha/lockout", { token: t.adminPat, body: { maxPasswordAttempts: { set: 2 } } });
    try {
      for (let i = 0; i < 2; i++) expect((await start("nope")).status).toBe(400);
      expect((await t.server.db.prisma.user.findUniqueOrThrow({ where: { id: alice.id } })).state).toBe("locked");
    } finally {
      await rest(t.url, "PATCH", "/settings/v3alpha/lockout", { token: t.adminPat, body: { maxPasswordAttempts: { set: 0 } } });
    }
    await deactivate(id);
  });

  it("a wrong password, an unknown user and a filter in the login name sign no one in", async () => {
    const id = await createDirectory("Strict Directory", { isAutoCreation: true });
    const { page, ctx } = await newPage(browser);
    for (const [login, password] of [
      ["bob", "wrong-password"],
      ["nobody", "bob-Secret-1"],
      ["*)(uid=*", "bob-Secret-1"],
      ["*", "bob-Secret-1"],
    ] as const) {
      const { status } = await signInAt(page, "Strict Directory", login, password);
      expect(status, login).toBe(401);
    }
    expect(await userNamed("bob")).toBeNull();
    await ctx.close();
    await deactivate(id);
  });

  it("StartTLS on ldap:// checks the certificate: without the CA nothing is sent and the page says so", async () => {
    const trusted = await createDirectory("TLS Directory", { isAutoCreation: true }, { servers: [ldap.url], start_tls: true });
    const { page, ctx } = await newPage(browser);
    expect((await signInAt(page, "TLS Directory", "bob", "bob-Secret-1")).status).toBeLessThan(400);
    expect(await userNamed("bob")).not.toBeNull();
    await deactivate(trusted);
    await createDirectory("Untrusted Directory", { isAutoCreation: true }, { servers: [ldap.url], start_tls: true, root_ca: "" });
    const { page: page2 } = await newPage(browser);
    const refused = await signInAt(page2, "Untrusted Directory", "carol", "carol-Secret-1");
    expect(refused.status).toBe(400);
    expect(refused.text).not.toContain(ldap.bindPassword);
    expect(await userNamed("carol")).toBeNull();
    await ctx.close();
    await page2.context().close();
  });

  it("wrong directory passwords count toward the linked account's lockout", async () => {
    await rest(t.url, "PATCH", "/settings/v3alpha/lockout", { token: t.adminPat, body: { maxPasswordAttempts: { set: 2 } } });
    const id = await createDirectory("Lockout Directory", { isAutoCreation: true });
    const { page, ctx } = await newPage(browser);
    // alice's account (linked to the first directory) is not linked to this one: link it by signing in
    await ldap.addUser({ uid: "dora", password: "dora-Secret-1", givenName: "Dora", sn: "Dir", cn: "Dora Dir", mail: "dora@ldap.example.com" });
    expect((await signInAt(page, "Lockout Directory", "dora", "dora-Secret-1")).status).toBeLessThan(400);
    const dora = (await userNamed("dora"))!;
    for (let i = 0; i < 2; i++) expect((await signInAt(page, "Lockout Directory", "dora", "nope")).status).toBe(401);
    expect((await t.server.db.prisma.user.findUniqueOrThrow({ where: { id: dora.id } })).state).toBe("locked");
    // locked: the right password no longer signs in
    expect((await signInAt(page, "Lockout Directory", "dora", "dora-Secret-1")).status).toBe(403);
    await rest(t.url, "PATCH", "/settings/v3alpha/lockout", { token: t.adminPat, body: { maxPasswordAttempts: { set: 0 } } });
    await ctx.close();
    await deactivate(id);
  });
});

describe.skipIf(!slapdAvailable)("the directory protocol (src/federation/ldap.ts)", () => {
  const settings = (over: Partial<LdapSettings> = {}): LdapSettings => ({
    servers: [ldap.url],
    startTls: false,
    baseDn: ldap.baseDn,
    bindDn: ldap.bindDn,
    bindPassword: ldap.bindPassword,
    userBase: "dn",
    userObjectClasses: ["inetOrgPerson"],
    userFilters: ["uid"],
    timeoutMs: 2000,
    rootCa: ldap.caPem,
    attributes: { email: "mail" },
    ...over,
  });
  const open = new LdapFederation(async (host) => host);

  it("searches under base_dn with user_base 'dn'; an empty password is never a bind", async () => {
    const ok = await open.signIn(settings(), "bob", "bob-Secret-1");
    expect(ok).toMatchObject({ user: { id: "bob", email: "bob@ldap.example.com", emailVerified: false } });
    expect(JSON.stringify(ok)).not.toMatch(/userPassword|SSHA/i);
    expect(await open.signIn(settings(), "bob", "")).toEqual({ wrongFor: "bob" });
    expect(await open.signIn(settings(), "*", "x")).toEqual({ wrongFor: undefined });
    expect(await open.signIn(settings(), "*)(uid=*", "x")).toEqual({ wrongFor: undefined });
  });

  it("tries the servers in order, and gives up on one that does not answer within the timeout", async () => {
    const silent = net.createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const port = (silent.address() as net.AddressInfo).port;
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const closedPort = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const started = Date.now();
    const ok = await open.signIn(
      settings({ servers: [`ldap://127.0.0.1:${closedPort}`, `ldap://127.0.0.1:${port}`, ldap.url], timeoutMs: 500 }),
      "bob",
      "bob-Secret-1",
    );
    expect(ok).toMatchObject({ user: { id: "bob" } });
    expect(Date.now() - started).toBeLessThan(5000);
    await expect(open.signIn(settings({ servers: [`ldap://127.0.0.1:${port}`], timeoutMs: 300 }), "bob", "x")).rejects.toBeInstanceOf(DirectoryUnreachable);
    silent.close();
  });

  it("refuses a directory at an address the outbound policy denies, before connecting", async () => {
    const guarded = new OutboundHttp(new TargetAddressPolicy());
    const policed = new LdapFederation((host) => guarded.address(host));
    await expect(policed.signIn(settings(), "bob", "bob-Secret-1")).rejects.toThrow(/refused|loopback|denied/i);
    guarded.close();
  });
});
