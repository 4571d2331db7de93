import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/browser.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

let t: TestServer;
let browser: Browser;
const PASSWORD = "Corr3ct!horse";

async function addHuman(username: string, password = PASSWORD, changeRequired = false) {
  const r = await rest(t.url, "POST", "/resources/v3alpha/users", {
    token: t.adminPat,
    body: {
      username,
      human: {
        profile: { givenName: username[0]!.toUpperCase() + username.slice(1), familyName: "Tester" },
        email: { address: `${username}@example.com`, isVerified: true },
        password: { password, changeRequired },
      },
    },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.details.id as string;
}

/** A fresh browser profile with scripts off: the pages must work without them. */
async function newBrowser(opts: { locale?: string } = {}): Promise<{ ctx: BrowserContext; page: Page }> {
  const ctx = await browser.newContext({ javaScriptEnabled: false, ...(opts.locale ? { locale: opts.locale } : {}) });
  return { ctx, page: await ctx.newPage() };
}

async function signIn(page: Page, username: string, password: string, query = "") {
  await page.goto(`${t.url}/ui/login${query}`);
  await page.fill("#loginName", username);
  await page.click("button[type=submit]");
  await page.fill("#password", password);
  await page.click("button[type=submit]");
}

const heading = (page: Page) => page.textContent("h1");
const alert = (page: Page) => page.textContent("[role=alert]");

beforeAll(async () => {
  t = await startTestServer();
  browser = await launchChromium();
  for (const name of ["alice", "carol", "dave", "erin"]) await addHuman(name);
  await addHuman("bob", "Initial!234", true);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe("the login UI in headless Chromium, without scripts", () => {
  it("signs in with login name and password into an HttpOnly, SameSite session cookie", async () => {
    const { ctx, page } = await newBrowser();
    await signIn(page, "alice", PASSWORD);
    expect(await heading(page)).toBe("Signed in as");
    expect(await page.textContent(".who")).toContain("Alice Tester");
    const agent = (await ctx.cookies()).find((c) => c.name === "svc_agent")!;
    expect(agent).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/" });
    const csrf = (await ctx.cookies()).find((c) => c.name === "svc_csrf")!;
    expect(csrf).toMatchObject({ httpOnly: true, sameSite: "Strict" });
    // login names are case-insensitive
    const other = await newBrowser();
    await signIn(other.page, "ALICE", PASSWORD);
    expect(await heading(other.page)).toBe("Signed in as");
    await other.ctx.close();
    await ctx.close();
  });

  it("refuses a wrong password, and says the same for a user that does not exist", async () => {
    const { ctx, page } = await newBrowser();
    await signIn(page, "alice", "wrong password");
    const wrong = await alert(page);
    expect(wrong).toMatch(/login name or password is wrong/);
    await signIn(page, "nobody-here", "wrong password");
    expect(await alert(page)).toBe(wrong);
    await ctx.close();
  });

  it("locks the user after the configured failed attempts, with a message that reveals nothing", async () => {
    const r = await rest(t.url, "PATCH", "/settings/v3alpha/lockout", { token: t.adminPat, body: { maxPasswordAttempts: { set: 3 } } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const { ctx, page } = await newBrowser();
    for (let i = 0; i < 3; i++) await signIn(page, "dave", `wrong-${i}`);
    const message = await alert(page);
    await signIn(page, "dave", PASSWORD);
    expect(await alert(page)).toBe(message);
    await signIn(page, "no-such-user", PASSWORD);
    expect(await alert(page)).toBe(message);
    const users = await rest(t.url, "POST", "/resources/v3alpha/users/_search", { token: t.adminPat, body: { filters: [{ username: { username: "dave" } }] } });
    const dave = users.body.result[0];
    expect(dave.state).toBe("USER_STATE_LOCKED");
    // unlocked by an administrator, the right password works again
    expect((await rest(t.url, "POST", `/resources/v3alpha/users/${dave.details.id}/_unlock`, { token: t.adminPat })).status).toBe(200);
    await signIn(page, "dave", PASSWORD);
    expect(await heading(page)).toBe("Signed in as");
    await ctx.close();
  });

  it("counts 50 concurrent wrong passwords exactly: the user is locked at the limit, never past it", async () => {
    const id = await addHuman("racer");
    const page = await rest(t.url, "GET", "/ui/login");
    const cookie = String(page.headers["set-cookie"]).split(";")[0]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body as string)![1]!;
    const attempt = (password: string) =>
      rest(t.url, "POST", "/ui/login/password", {
        body: new URLSearchParams({ loginName: "racer", password, csrf }).toString(),
        headers: { "content-type": "application/x-www-form-urlencoded", cookie },
      });
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => attempt(`wrong-${i}`)));
    expect(results.every((r) => r.status === 401)).toBe(true);
    const events = await t.server.db.prisma.event.findMany({ where: { aggregateId: id }, select: { type: true } });
    // lockout is at 3 (set above): three failures, one lock, then nothing is counted for a locked user
    expect(events.filter((e) => e.type === "user.password.check_failed")).toHaveLength(3);
    expect(events.filter((e) => e.type === "user.user.locked")).toHaveLength(1);
    expect((await attempt(PASSWORD)).status).toBe(401);
  });

  it("makes a user with an initial password choose a new one, checked against the complexity rules", async () => {
    const { ctx, page } = await newBrowser();
    await signIn(page, "bob", "Initial!234");
    expect(await heading(page)).toBe("Change your password");
    await page.fill("#newPassword", "Brand!new123");
    await page.fill("#confirmPassword", "Brand!new124");
    await page.click("button[type=submit]");
    expect(await alert(page)).toMatch(/do not match/);
    await page.fill("#newPassword", "weak");
    await page.fill("#confirmPassword", "weak");
    await page.click("button[type=submit]");
    expect(await alert(page)).toMatch(/at least 8 characters/);
    await page.fill("#newPassword", "Brand!new123");
    await page.fill("#confirmPassword", "Brand!new123");
    await page.click("button[type=submit]");
    expect(await heading(page)).toBe("Signed in as");
    const again = await newBrowser();
    await signIn(again.page, "bob", "Brand!new123");
    expect(await heading(again.page)).toBe("Signed in as");
    await signIn(again.page, "bob", "Initial!234", "?prompt=login");
    expect(await alert(again.page)).toMatch(/wrong/);
    await again.ctx.close();
    await ctx.close();
  });

  it("offers the accounts the browser holds, and signs out of all of them", async () => {
    const { ctx, page } = await newBrowser();
    await signIn(page, "carol", PASSWORD);
    await signIn(page, "erin", PASSWORD, "?prompt=login");
    await page.goto(`${t.url}/ui/login`);
    expect(await heading(page)).toBe("Choose an account");
    const accounts = await page.$$eval(".account", (els) => els.map((e) => e.textContent));
    expect(accounts.join("|")).toMatch(/Erin Tester.*\|.*Carol Tester/);
    await page.click("button.account:has-text('Carol')");
    expect(await page.textContent(".who")).toContain("Carol Tester");

    await page.goto(`${t.url}/ui/login/logout`);
    await page.click("button[type=submit]");
    expect(await page.textContent("main p")).toBe("You are signed out.");
    await page.goto(`${t.url}/ui/login`);
    expect(await page.$("#loginName")).not.toBeNull();
    expect(await t.server.db.prisma.loginSession.count({ where: { userId: { in: await idsOf(["carol", "erin"]) } } })).toBe(0);
    await ctx.close();
  });

  it("signs in with an imported hash and rehashes it to the default", async () => {
    const imported = "$pbkdf2-sha256$27500$AAECAwQFBgcICQoLDA0ODw==$qnA427fe69fAjkevcHZvnm7vp3MewnxKL4g2WLfI7U4="; // "correct horse"
    const r = await rest(t.url, "POST", "/resources/v3alpha/users", {
      token: t.adminPat,
      body: {
        username: "imported",
        human: { profile: { givenName: "Im", familyName: "Ported" }, email: { address: "imported@example.com" }, password: { hashedPassword: imported } },
      },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const { ctx, page } = await newBrowser();
    await signIn(page, "imported", "correct horse");
    expect(await heading(page)).toBe("Signed in as");
    const row = await t.server.db.prisma.user.findUniqueOrThrow({ where: { id: r.body.details.id } });
    // the default form of this server: scrypt at its SVC_PASSWORD_HASH_COST (the suite's 10)
    expect(row.passwordHash).toMatch(/^\$scrypt\$ln=10,r=8,p=1\$/);
    await signIn(page, "imported", "correct horse", "?prompt=login");
    expect(await heading(page)).toBe("Signed in as");
    await ctx.close();
  });

  it("refuses a form whose CSRF token is missing or forged", async () => {
    const { ctx, page } = await newBrowser();
    await page.goto(`${t.url}/ui/login`);
    // remove the token from the form, as a cross-site form would lack it
    const res = await page.request.post(`${t.url}/ui/login/password`, { form: { loginName: "alice", password: PASSWORD } });
    expect(res.status()).toBe(403);
    expect(await res.text()).toMatch(/form expired or was not sent from this site/);
    const forged = await page.request.post(`${t.url}/ui/login/password`, { form: { loginName: "alice", password: PASSWORD, csrf: "AAAA" } });
    expect(forged.status()).toBe(403);
    // without the CSRF cookie, a token taken from another browser does not help
    const token = await page.getAttribute("input[name=csrf]", "value");
    const stranger = await rest(t.url, "POST", "/ui/login/password", {
      body: new URLSearchParams({ loginName: "alice", password: PASSWORD, csrf: token! }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(stranger.status).toBe(403);
    await ctx.close();
  });

  it("sends security headers, and speaks the language of ui_locales or Accept-Language that the instance allows", async () => {
    const r = await rest(t.url, "GET", "/ui/login");
    expect(r.headers["content-security-policy"]).toMatch(/frame-ancestors 'none'/);
    expect(r.headers["content-security-policy"]).toMatch(/default-src 'none'/);
    expect(r.headers["x-frame-options"]).toBe("DENY");
    expect(r.headers["referrer-policy"]).toBe("no-referrer");
    expect(r.headers["x-content-type-options"]).toBe("nosniff");
    const german = await newBrowser({ locale: "de-CH" });
    await german.page.goto(`${t.url}/ui/login`);
    expect(await heading(german.page)).toBe("Anmelden");
    expect(await german.page.getAttribute("html", "lang")).toBe("de");
    await german.page.goto(`${t.url}/ui/login?ui_locales=fr`);
    expect(await heading(german.page)).toBe("Connexion");
    // once the instance allows only English, German browsers get English
    const set = await rest(t.url, "PATCH", "/settings/v3alpha/languages", { token: t.adminPat, body: { restrictedLanguages: { languages: [{ key: "en" }] } } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    await german.page.goto(`${t.url}/ui/login`);
    expect(await heading(german.page)).toBe("Sign in");
    await german.ctx.close();
  });

  it("lets people register themselves only when the login settings allow it", async () => {
    expect((await rest(t.url, "GET", "/ui/login/register")).status).toBe(404);
    const allow = await rest(t.url, "PATCH", "/settings/v3alpha/login", { token: t.adminPat, body: { allowRegister: { set: true } } });
    expect(allow.status, JSON.stringify(allow.body)).toBe(200);
    const { ctx, page } = await newBrowser();
    await page.goto(`${t.url}/ui/login`);
    await page.click("text=Register");
    await page.fill("#givenName", "Frank");
    await page.fill("#familyName", "Newcomer");
    await page.fill("#email", "frank@example.com");
    await page.fill("#loginName", "frank");
    await page.fill("#newPassword", PASSWORD);
    await page.fill("#confirmPassword", PASSWORD);
    await page.click("button[type=submit]");
    expect(await page.textContent(".who")).toContain("Frank Newcomer");
    const found = await rest(t.url, "POST", "/resources/v3alpha/users/_search", {
      token: t.adminPat,
      body: { filters: [{ username: { username: "frank" } }] },
    });
    expect(found.body.result[0]).toMatchObject({ state: "USER_STATE_ACTIVE", human: { email: { address: "frank@example.com", isVerified: false } } });
    await ctx.close();
  });
});

async function idsOf(usernames: string[]) {
  return (await t.server.db.prisma.user.findMany({ where: { username: { in: usernames } }, select: { id: true } })).map((u) => u.id);
}
