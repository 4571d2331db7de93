import type { Browser, Page } from "playwright-core";
import { Writable } from "node:stream";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { afterCallback, launchChromium } from "../support/browser.js";
import { rest } from "../support/clients.js";
import { type ExternalClaims, type ExternalOp, startExternalOp } from "../support/external-op.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { TargetServer } from "../support/targets.js";
import { addHuman, newPage, startCodeFlow, startRedirectCatcher, webApp } from "../oidc/rp.js";

/**
 * Sign-in through an external OpenID Connect provider in the hosted login UI: a real provider (oidc-provider on its
 * own port), Chromium going there and back, the account found, linked or created as the provider's options say.
 */
let t: TestServer;
let op: ExternalOp;
let browser: Browser;
/** What the provider says of some of its users (read at each sign-in there): frank's address it does not vouch for. */
const opUsers: Record<string, ExternalClaims> = { frank: { email_verified: false } };

const api = (method: string, path: string, body?: unknown) =>
  rest(t.url, method, `/resources/v3alpha${path}`, { token: t.adminPat, ...(body ? { body } : {}) });

async function createProvider(name: string, options: Record<string, unknown>) {
  const r = await api("POST", "/idps/oidc", {
    idp: { name, options },
    config: { issuer: op.issuer, client_id: op.clientId, client_secret: op.clientSecret, scopes: ["openid", "email", "profile"], use_pkce: true },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.details.id as string;
}

const setState = (id: string, policy: "STATE_POLICY_ACTIVATE" | "STATE_POLICY_DEACTIVATE") =>
  api("PATCH", `/idps/oidc/${id}`, { idp: { state_policy: policy } });

/** From the login page's button to the provider's login page. */
async function toProvider(page: Page, provider: string, query = "") {
  await page.goto(`${t.url}/ui/login${query}`);
  await page.click(`button.idp:has-text("${provider}")`);
  await page.waitForURL((u) => u.href.startsWith(op.issuer));
}

/** The provider's pages: its development login (any password), then its consent on a browser's first sign-in there. */
async function atProvider(page: Page, login: string) {
  await page.fill("input[name=login]", login);
  await page.fill("input[name=password]", "anything");
  await page.click("button[type=submit]");
  const consent = page.locator("input[name=prompt][value=consent]");
  await Promise.race([page.waitForURL((u) => u.href.startsWith(t.url)), consent.waitFor({ state: "attached" })]);
  if (await consent.count()) await page.click("button[type=submit]");
}

/** From the login page through the provider back to this server: the page's text. */
async function signInThrough(page: Page, provider: string, login: string) {
  await toProvider(page, provider);
  await atProvider(page, login);
  await page.waitForURL((u) => u.href.startsWith(t.url));
  await afterCallback(page);
  return (await page.textContent("main")) ?? "";
}

const userIdOf = async (username: string) => (await t.server.db.prisma.user.findFirst({ where: { instanceId: t.instanceId, loginName: username } }))?.id;
const eventTypes = async (userId: string) =>
  (await t.server.db.prisma.event.findMany({ where: { aggregateId: userId }, orderBy: { position: "asc" } })).map((e) => e.type);

/** The server's warnings (why a sign-in "did not succeed" is only in the log): printed when a test fails. */
const warnings: string[] = [];
beforeEach(({ onTestFailed }) => {
  const from = warnings.length;
  onTestFailed(() => console.error(`the server's warnings during the test:\n${warnings.slice(from).join("") || "(none)"}`));
});

beforeAll(async () => {
  const logStream = new Writable({ write: (line, _enc, done) => done(void warnings.push(String(line))) });
  t = await startTestServer({ SVC_LOG_LEVEL: "warn" }, { logger: true, logStream });
  op = await startExternalOp(`${t.url}/idps/callback`, opUsers);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await op?.close();
  await t?.close();
});

describe("sign-in through an external OIDC provider", () => {
  let created: string;

  it("shows a button for each active provider; auto-creation makes a linked account from the provider's claims", async () => {
    created = await createProvider("Corp SSO", { isAutoCreation: true });
    const { page } = await newPage(browser);
    const text = await signInThrough(page, "Corp SSO", "ada");
    expect(text).toContain("ada");
    const id = (await userIdOf("ada"))!;
    expect(id).toBeTruthy();
    const user = await t.server.db.prisma.user.findUniqueOrThrow({ where: { id } });
    expect(user).toMatchObject({ email: "ada@ext.example.com", emailVerified: true, givenName: "Ada", familyName: "External" });
    expect(await t.server.db.prisma.userIdpLink.findMany({ where: { userId: id } })).toMatchObject([{ idpId: created, externalUserId: "ada" }]);
    expect(await eventTypes(id)).toEqual(expect.arrayContaining(["user.human.added", "user.idp_link.added", "user.idp_login.succeeded"]));
    // no provider token or secret in the log
    const payloads = JSON.stringify((await t.server.db.prisma.event.findMany({ where: { aggregateId: id } })).map((e) => e.payload));
    expect(payloads).not.toContain(op.clientSecret);

    // again: the linked account signs in, nothing new is created
    const { page: again } = await newPage(browser);
    expect(await signInThrough(again, "Corp SSO", "ada")).toContain("ada");
    expect(await t.server.db.prisma.user.count({ where: { instanceId: t.instanceId, loginName: { startsWith: "ada" } } })).toBe(1);
    await page.context().close();
    await again.context().close();
  });

  it("offers to link an account whose e-mail address is verified on both sides, and never one by an unverified one", async () => {
    const linking = await createProvider("Mail Link", { autoLinking: "AUTO_LINKING_OPTION_EMAIL" });
    await setState(created, "STATE_POLICY_DEACTIVATE");
    const bob = await addHuman(t, "bob", "Secr3t!pass");
    await api("PATCH", `/users/${bob}`, { human: { email: { address: "bob@ext.example.com", isVerified: true } } });
    // the prompt names the account found; "use another account" links nothing and goes on as if none matched
    const { page: declined } = await newPage(browser);
    const prompt = await signInThrough(declined, "Mail Link", "bob");
    expect(prompt).toContain("This account here matches your account at Mail Link");
    expect(prompt).toContain("bob");
    await declined.click("#link-other");
    expect(await declined.textContent("main")).toContain("No account here is linked");
    expect(await t.server.db.prisma.userIdpLink.count({ where: { userId: bob } })).toBe(0);
    // "link and continue" links it and signs in
    const { page } = await newPage(browser);
    await signInThrough(page, "Mail Link", "bob");
    await page.click("#link-found");
    await afterCallback(page);
    expect(await page.textContent("main")).toContain("bob");
    expect(await t.server.db.prisma.userIdpLink.findMany({ where: { userId: bob } })).toMatchObject([{ idpId: linking, externalUserId: "bob" }]);
    // linked now: the next sign-in asks nothing
    const { page: again } = await newPage(browser);
    expect(await signInThrough(again, "Mail Link", "bob")).not.toContain("matches your account");

    // carol's address here is not verified: no link, and neither linking nor creation is allowed: a page says so
    const carol = await addHuman(t, "carol", "Secr3t!pass");
    await api("PATCH", `/users/${carol}`, { human: { email: { address: "carol@ext.example.com", isVerified: false } } });
    const { page: other } = await newPage(browser);
    const text = await signInThrough(other, "Mail Link", "carol");
    expect(text).toContain("No account here is linked");
    expect(await t.server.db.prisma.userIdpLink.count({ where: { userId: carol } })).toBe(0);
    // frank's address is verified here, but the provider does not vouch for it: no link
    const frank = await addHuman(t, "frank", "Secr3t!pass");
    await api("PATCH", `/users/${frank}`, { human: { email: { address: "frank@ext.example.com", isVerified: true } } });
    const { page: third } = await newPage(browser);
    expect(await signInThrough(third, "Mail Link", "frank")).toContain("No account here is linked");
    expect(await t.server.db.prisma.userIdpLink.count({ where: { userId: frank } })).toBe(0);
    for (const p of [declined, page, again, other, third]) await p.context().close();
    await setState(linking, "STATE_POLICY_DEACTIVATE");
    await setState(created, "STATE_POLICY_ACTIVATE");
  });

  it("takes the provider's answer once, only in the browser that left, and only while the provider is active", async () => {
    const { page } = await newPage(browser);
    await toProvider(page, "Corp SSO");
    // The browser loses its binding cookie while it is away: the answer it brings back is refused and not used up.
    const binding = (await page.context().cookies(t.url)).find((c) => c.name === "svc_idp");
    expect(binding).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/" });
    await page.context().clearCookies({ name: "svc_idp" });
    let answer = "";
    page.on("request", (r) => {
      if (r.url().startsWith(`${t.url}/idps/callback`)) answer = r.url();
    });
    const refused = page.waitForResponse((r) => r.url().startsWith(`${t.url}/idps/callback`));
    await atProvider(page, "dave");
    expect((await refused).status()).toBe(400);
    expect(answer).toContain("state=");
    // another browser with the same answer: refused
    const { page: stranger } = await newPage(browser);
    expect((await stranger.goto(answer))!.status()).toBe(400);
    // the browser that left, its cookie back, completes it once; the same answer again is refused
    await page.context().addCookies([binding!]);
    let continued = "";
    page.on("request", (r) => {
      if (r.url().startsWith(`${t.url}/ui/login/idp/continue`)) continued = r.url();
    });
    await page.goto(answer);
    expect(await page.textContent("main")).toContain("dave");
    expect((await page.goto(answer))!.status()).toBe(400);
    expect(await userIdOf("dave")).toBeTruthy();
    // the page the callback moved the browser on to, once: from the history (after a logout, say) it signs no one in
    expect(continued).toContain("s=");
    expect((await page.goto(continued))!.status()).toBe(400);

    // a form POST to the callback is an answer only for a provider that answers so (Apple): an OIDC round trip's
    // waiting answer is not replaced
    const { page: posting } = await newPage(browser);
    await toProvider(posting, "Corp SSO");
    const state = new URL(posting.url()).searchParams.get("state") ?? new URLSearchParams(new URL(posting.url()).search).get("state");
    const waiting = await t.server.db.prisma.idpIntent.count({ where: { state: "started" } });
    expect(waiting).toBeGreaterThan(0);
    const held = await posting.request.post(`${t.url}/idps/callback`, { form: { state: state ?? "", code: "forged" }, maxRedirects: 0 });
    expect(held.status()).toBe(400);
    await posting.context().close();

    // a provider deactivated while the browser is away completes nothing, and shows no button
    const { page: late } = await newPage(browser);
    await toProvider(late, "Corp SSO");
    await setState(created, "STATE_POLICY_DEACTIVATE");
    const back = late.waitForResponse((r) => r.url().startsWith(`${t.url}/idps/callback`));
    await atProvider(late, "erin");
    expect((await back).status()).toBe(403);
    expect(await userIdOf("erin")).toBeUndefined();
    await late.goto(`${t.url}/ui/login`);
    expect(await late.locator("button.idp").count()).toBe(0);
    await setState(created, "STATE_POLICY_ACTIVATE");
    for (const p of [page, stranger, late]) await p.context().close();
  });

  it("signs no one in, links and creates nothing, where the account's own organisation deactivated the provider", async () => {
    const closed = await t.org("Closed");
    const off = await api("PATCH", `/idps/oidc/${created}?ctx.org_id=${closed}`, { idp: { state_policy: "STATE_POLICY_DEACTIVATE" } });
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    const moved = await rest(t.url, "POST", `/resources/v3alpha/users?ctx.org_id=${closed}`, {
      token: t.adminPat,
      body: { username: "kim", human: { profile: { givenName: "Kim", familyName: "Closed" }, email: { address: "kim@closed.example.com", isVerified: true } } },
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(201);
    const kim = moved.body.details.id as string;
    expect((await api("POST", `/users/${kim}/idp_links`, { idp_id: created, user_id: "kim" })).status).toBe(200);
    const { page } = await newPage(browser);
    // the callback moves the browser on (continuePage); where the account is decided, the sign-in is refused
    const back = page.waitForResponse((r) => r.url().startsWith(`${t.url}/ui/login/idp/continue`));
    await toProvider(page, "Corp SSO");
    await atProvider(page, "kim");
    expect((await back).status()).toBe(403);
    expect(await eventTypes(kim)).not.toContain("user.idp_login.succeeded");
    await page.context().close();
  });

  it("a cancel at the provider is a clear page (400), and the round trip is used up", async () => {
    const { page } = await newPage(browser);
    let state = "";
    page.on("request", (r) => {
      const s = new URL(r.url()).searchParams.get("state");
      if (r.url().startsWith(`${op.issuer}/auth`) && s) state = s;
    });
    await toProvider(page, "Corp SSO");
    expect(state).not.toBe("");
    const cancelled = await page.goto(`${t.url}/idps/callback?error=access_denied&state=${encodeURIComponent(state)}&iss=${encodeURIComponent(op.issuer)}`);
    expect(cancelled!.status()).toBe(400);
    expect(await page.textContent("main")).toContain("did not succeed");
    await page.context().close();
  });

  it("asks for a second factor after the provider when the login settings force one (force_mfa, not local-only)", async () => {
    const forced = await rest(t.url, "PATCH", "/settings/v3alpha/login", { token: t.adminPat, body: { forceMfa: { set: true } } });
    expect(forced.status, JSON.stringify(forced.body)).toBeLessThan(300);
    try {
      const { page } = await newPage(browser);
      expect(await signInThrough(page, "Corp SSO", "ada")).toContain("Set up an authenticator app");
      await page.context().close();
      // force_mfa_local_only: a sign-in through a provider needs none
      await rest(t.url, "PATCH", "/settings/v3alpha/login", { token: t.adminPat, body: { forceMfa: { set: false }, forceMfaLocalOnly: { set: true } } });
      const { page: local } = await newPage(browser);
      expect(await signInThrough(local, "Corp SSO", "ada")).toContain("ada");
      await local.context().close();
    } finally {
      await rest(t.url, "PATCH", "/settings/v3alpha/login", { token: t.adminPat, body: { forceMfa: { set: false }, forceMfaLocalOnly: { set: false } } });
    }
  });

  it("completes a relying party's code flow: its tokens say the sign-in was federated (amr) and when", async () => {
    const rp = await startRedirectCatcher();
    const app = await webApp(t, rp);
    const { page } = await newPage(browser);
    const before = Math.floor(Date.now() / 1000) - 1;
    const finish = await startCodeFlow(page, { issuer: t.url, app, redirectTo: rp });
    await page.click('button.idp:has-text("Corp SSO")');
    await page.waitForURL((u) => u.href.startsWith(op.issuer));
    await atProvider(page, "ada");
    const { claims, introspection } = await finish().catch((e) => {
      throw new Error(`${page.url()} ${e}`);
    });
    expect(claims.sub).toBe(await userIdOf("ada"));
    expect(claims.amr).toEqual(["fed"]);
    expect(claims.auth_time).toBeGreaterThanOrEqual(before);
    expect(introspection.active).toBe(true);
    // introspection names the provider the user signed in through
    expect(introspection.idp_id).toBe(created);
    expect(introspection.amr).toEqual(["fed"]);
    await page.context().close();
    await rp.close();
  });

  it("signs in the same way through the OAuth 2.0 kind (user endpoint, id_attribute) and GitLab self-hosted (OIDC at its issuer)", async () => {
    // oidc-provider stands in for both: its endpoints configured one by one, its userinfo as the user endpoint
    const oauth = await api("POST", "/idps/oauth", {
      idp: { name: "Plain OAuth", options: { isAutoCreation: true } },
      config: {
        client_id: op.clientId,
        client_secret: op.clientSecret,
        authorization_endpoint: `${op.issuer}/auth`,
        token_endpoint: `${op.issuer}/token`,
        user_endpoint: `${op.issuer}/me`,
        scopes: ["openid", "email", "profile"],
        id_attribute: "sub",
        use_pkce: true,
      },
    });
    expect(oauth.status, JSON.stringify(oauth.body)).toBe(201);
    const { page } = await newPage(browser);
    expect(await signInThrough(page, "Plain OAuth", "grace")).toContain("grace");
    const grace = (await userIdOf("grace"))!;
    expect(await t.server.db.prisma.userIdpLink.findMany({ where: { userId: grace } })).toMatchObject([
      { idpId: oauth.body.details.id, externalUserId: "grace" },
    ]);

    const gitlab = await api("POST", "/idps/gitlab_self_hosted", {
      idp: { name: "Our GitLab", options: { autoLinking: "AUTO_LINKING_OPTION_USERNAME" } },
      config: { client_id: op.clientId, client_secret: op.clientSecret, issuer: op.issuer },
    });
    expect(gitlab.status, JSON.stringify(gitlab.body)).toBe(201);
    const { page: other } = await newPage(browser);
    // offered by username: the account just made
    expect(await signInThrough(other, "Our GitLab", "grace")).toContain("matches your account at Our GitLab");
    await other.click("#link-found");
    await afterCallback(other);
    expect(await other.textContent("main")).toContain("grace");
    expect(await t.server.db.prisma.userIdpLink.count({ where: { userId: grace } })).toBe(2);
    for (const p of [page, other]) await p.context().close();
    for (const id of [oauth.body.details.id, gitlab.body.details.id]) await api("DELETE", `/idps/${id}`);
  });

  it("is_auto_update takes over the fields the provider sends at each sign-in; without it they stay", async () => {
    const updating = await createProvider("Updating", { isAutoCreation: true, isAutoUpdate: true });
    const { page } = await newPage(browser);
    expect(await signInThrough(page, "Updating", "henry")).toContain("henry");
    const henry = (await userIdOf("henry"))!;
    opUsers.henry = { given_name: "Hank", family_name: "Renamed", email: "hank@ext.example.com" };
    const { page: again } = await newPage(browser);
    expect(await signInThrough(again, "Updating", "henry")).toContain("henry");
    expect(await t.server.db.prisma.user.findUniqueOrThrow({ where: { id: henry } })).toMatchObject({
      givenName: "Hank",
      familyName: "Renamed",
      email: "hank@ext.example.com",
      emailVerified: true,
    });
    // Corp SSO has no auto-update: ada's changed name at the provider stays there
    opUsers.ada = { given_name: "Adelaide" };
    const { page: third } = await newPage(browser);
    expect(await signInThrough(third, "Corp SSO", "ada")).toContain("ada");
    expect((await t.server.db.prisma.user.findFirstOrThrow({ where: { instanceId: t.instanceId, loginName: "ada" } })).givenName).toBe("Ada");
    for (const p of [page, again, third]) await p.context().close();
    await setState(updating, "STATE_POLICY_DEACTIVATE");
  });

  it("event executions react to a federated sign-in and a new link, which carry the provider and the external ID, no token", async () => {
    const receiver = await new TargetServer().start();
    const target = await rest(t.url, "POST", "/resources/v3alpha/targets", {
      token: t.adminPat,
      body: { name: "idp-events", restWebhook: { url: receiver.url }, timeout: "2s" },
    });
    for (const event of ["user.idp_login.succeeded", "user.idp_link.added"]) {
      const set = await rest(t.url, "POST", "/resources/v3alpha/executions", {
        token: t.adminPat,
        body: { condition: { event: { event } }, targets: [target.body.details.id] },
      });
      expect(set.status, JSON.stringify(set.body)).toBeLessThan(300);
    }
    try {
      const { page } = await newPage(browser);
      expect(await signInThrough(page, "Corp SSO", "ivy")).toContain("ivy");
      // ivy's two events (an earlier test's sign-in may still be delivered to the new execution first)
      const ofIvy = () => receiver.received.filter((r) => r.body.payload?.externalUserId === "ivy");
      for (const end = Date.now() + 10_000; ofIvy().length < 2 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 50));
      const got = ofIvy();
      const byType = Object.fromEntries(got.map((r) => [r.body.type, r.body]));
      expect(byType["user.idp_link.added"].payload).toMatchObject({ idpId: created, externalUserId: "ivy" });
      expect(byType["user.idp_login.succeeded"].payload).toEqual({ idpId: created, externalUserId: "ivy" });
      expect(JSON.stringify(got.map((r) => r.body))).not.toContain(op.clientSecret);
      await page.context().close();
    } finally {
      await receiver.stop();
      for (const event of ["user.idp_login.succeeded", "user.idp_link.added"]) {
        await rest(t.url, "DELETE", `/resources/v3alpha/executions/${encodeURIComponent(`event/${event}`)}`, { token: t.adminPat });
      }
    }
  });

  it("offers no provider when the login settings do not allow external ones", async () => {
    const off = await rest(t.url, "PATCH", "/settings/v3alpha/login", { token: t.adminPat, body: { allowExternalIdp: { set: false } } });
    expect(off.status, JSON.stringify(off.body)).toBeLessThan(300);
    const { page } = await newPage(browser);
    await page.goto(`${t.url}/ui/login`);
    expect(await page.locator("button.idp").count()).toBe(0);
    await page.context().close();
  });
});

describe("an external account no account here is linked to", () => {
  beforeAll(async () => {
    await rest(t.url, "PATCH", "/settings/v3alpha/login", { token: t.adminPat, body: { allowExternalIdp: { set: true } } });
  });

  it("is offered 'link to my existing account' (is_linking_allowed): a local sign-in links it", async () => {
    const id = await createProvider("Link Offer", { isLinkingAllowed: true });
    const hana = await addHuman(t, "hana", "Secr3t!pass");
    const { page } = await newPage(browser);
    await signInThrough(page, "Link Offer", "hana-ext");
    expect(await page.locator("#create-account").count()).toBe(0);
    await page.fill("input[name=loginName]", "hana");
    await page.fill("input[name=password]", "wrong password");
    const [wrong] = await Promise.all([page.waitForResponse((r) => r.url().endsWith("/ui/login/idp/link")), page.click("#link-account")]);
    expect(wrong.status()).toBe(401);
    expect(await t.server.db.prisma.userIdpLink.count({ where: { userId: hana } })).toBe(0);
    await page.fill("input[name=loginName]", "hana");
    await page.fill("input[name=password]", "Secr3t!pass");
    const [linked] = await Promise.all([page.waitForResponse((r) => r.url().endsWith("/ui/login/idp/link")), page.click("#link-account")]);
    expect(linked.status()).toBeLessThan(400);
    expect(await t.server.db.prisma.userIdpLink.findMany({ where: { userId: hana } })).toMatchObject([{ idpId: id, externalUserId: "hana-ext" }]);
    // the next time, the provider alone signs hana in
    const { page: again } = await newPage(browser);
    expect(await signInThrough(again, "Link Offer", "hana-ext")).toContain("hana");
    await page.context().close();
    await again.context().close();
    await setState(id, "STATE_POLICY_DEACTIVATE");
  });

  it("links nothing for a user whose password must be changed first", async () => {
    const id = await createProvider("Link Change", { isLinkingAllowed: true });
    const made = await rest(t.url, "POST", "/resources/v3alpha/users", {
      token: t.adminPat,
      body: {
        username: "ines",
        human: {
          profile: { givenName: "Ines", familyName: "T" },
          email: { address: "ines@example.com", isVerified: true },
          password: { password: "Secr3t!pass", changeRequired: true },
        },
      },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const { page } = await newPage(browser);
    await signInThrough(page, "Link Change", "ines-ext");
    await page.fill("input[name=loginName]", "ines");
    await page.fill("input[name=password]", "Secr3t!pass");
    const [answer] = await Promise.all([page.waitForResponse((r) => r.url().endsWith("/ui/login/idp/link")), page.click("#link-account")]);
    expect(answer.status()).toBe(403);
    expect(await page.textContent("main")).toMatch(/changed first/);
    expect(await t.server.db.prisma.userIdpLink.count({ where: { userId: made.body.details.id } })).toBe(0);
    await page.context().close();
    await setState(id, "STATE_POLICY_DEACTIVATE");
  });

  it("is offered 'create an account' (is_creation_allowed) pre-filled; the address stays verified only as the provider sent it", async () => {
    const id = await createProvider("Create Offer", { isCreationAllowed: true, isLinkingAllowed: true });
    const { page } = await newPage(browser);
    await signInThrough(page, "Create Offer", "ivan");
    // both choices, the form filled from the provider's claims
    expect(await page.locator("#link-account").count()).toBe(1);
    expect(await page.inputValue("input[name=username]")).toBe("ivan");
    expect(await page.inputValue("input[name=email]")).toBe("ivan@ext.example.com");
    expect(await page.inputValue("input[name=givenName]")).toBe("Ivan");
    const [created] = await Promise.all([page.waitForResponse((r) => r.url().endsWith("/ui/login/idp/register")), page.click("#create-account")]);
    expect(created.status()).toBeLessThan(400);
    const ivan = (await userIdOf("ivan"))!;
    expect(await t.server.db.prisma.user.findUniqueOrThrow({ where: { id: ivan } })).toMatchObject({ email: "ivan@ext.example.com", emailVerified: true });
    expect(await t.server.db.prisma.userIdpLink.findMany({ where: { userId: ivan } })).toMatchObject([{ idpId: id, externalUserId: "ivan" }]);

    // another address typed in: not verified; a taken username: the form again, naming the problem
    const { page: jo } = await newPage(browser);
    await signInThrough(jo, "Create Offer", "jo");
    await jo.fill("input[name=username]", "ivan");
    const [taken] = await Promise.all([jo.waitForResponse((r) => r.url().endsWith("/ui/login/idp/register")), jo.click("#create-account")]);
    expect(taken.status()).toBe(400);
    expect(await jo.textContent("main")).toContain("This login name is taken.");
    await jo.fill("input[name=username]", "jo");
    await jo.fill("input[name=email]", "jo@elsewhere.example");
    await Promise.all([jo.waitForResponse((r) => r.url().endsWith("/ui/login/idp/register")), jo.click("#create-account")]);
    expect(await t.server.db.prisma.user.findFirstOrThrow({ where: { instanceId: t.instanceId, loginName: "jo" } })).toMatchObject({ emailVerified: false });
    await page.context().close();
    await jo.context().close();
    await setState(id, "STATE_POLICY_DEACTIVATE");
  });

  it("keeps the choice to the browser that came back from the provider", async () => {
    const id = await createProvider("Bound Offer", { isCreationAllowed: true });
    const { page } = await newPage(browser);
    await signInThrough(page, "Bound Offer", "lee");
    const pending = await page.inputValue("input[name=pending]");
    // another browser posting the same choice (with its own CSRF token) creates nothing
    const { page: other } = await newPage(browser);
    await other.goto(`${t.url}/ui/login`);
    const csrf = await other.inputValue("input[name=csrf]");
    const answer = await other.request.post(`${t.url}/ui/login/idp/register`, {
      form: { csrf, pending, username: "lee", givenName: "Lee", familyName: "X", email: "lee@ext.example.com" },
      headers: { origin: t.url },
    });
    expect(answer.status()).toBe(400);
    expect(await userIdOf("lee")).toBeUndefined();
    await page.context().close();
    await other.context().close();
    await setState(id, "STATE_POLICY_DEACTIVATE");
  });
});
