import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { launchChromium } from "../support/browser.js";
import { consoleBuild } from "../support/console.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { awayFromPeriodEnd, totpCode } from "../support/totp.js";
import { consolePage, expectAccessible, go, human, signInAt } from "./support.js";

/**
 * The admin console in Debian's Chromium against a real server: the sign-in (the first admin's forced password
 * change), what each kind of user sees, its languages and colour schemes, with axe-core on every page and the CSP on.
 */
let t: TestServer;
let browser: Browser;
const FIRST = "Configured-Secret-9";
const CHANGED = "Changed-Secret-77!";
const PASSWORD = "Corr3ct!horse";

beforeAll(async () => {
  t = await startTestServer({ SVC_FIRSTINSTANCE_ADMIN_PASSWORD: FIRST }, { consoleDir: await consoleBuild() });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe("the first admin", () => {
  it("is sent from / to the login page, changes the first password there, and lands in the console", async () => {
    const { ctx, page, problems } = await consolePage(browser);
    await page.goto(`${t.url}/`);
    await signInAt(page, "admin", FIRST, CHANGED);
    await page.waitForSelector("nav.side");
    expect(new URL(page.url()).pathname).toBe("/ui/console/");
    expect(await page.textContent("h1")).toBe("Welcome, Administrator");
    const sections = await page.locator("nav.side a").allTextContents();
    expect(sections).toEqual([
      "Overview",
      "Organizations",
      "Users",
      "Projects",
      "Identity providers",
      "Settings",
      "Actions",
      "Export and import",
      "Audit log",
      "Notification providers",
      "Instances",
    ]);
    await expectAccessible(page, "overview");
    // the tokens are the page's only: nothing in storage but the language and theme choices
    const stored = await page.evaluate(() => [...Object.keys(localStorage), ...Object.keys(sessionStorage)]);
    expect(stored.filter((k) => !/^console\.(language|theme|org)$/.test(k))).toEqual([]);
    expect(problems).toEqual([]);
    await ctx.close();
  });

  it("signs in again at a new page load without a prompt while the login session lasts, and signs out", async () => {
    const { ctx, page, problems } = await consolePage(browser);
    await page.goto(`${t.url}/ui/console/users`);
    await signInAt(page, "admin", CHANGED);
    await page.waitForSelector("nav.side");
    expect(new URL(page.url()).pathname).toBe("/ui/console/users");
    await page.reload();
    await page.waitForSelector("nav.side");
    expect(new URL(page.url()).pathname).toBe("/ui/console/users");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/ui\/login/);
    // the console's next load asks for a password again
    await page.goto(`${t.url}/ui/console/`);
    await page.waitForURL(/\/ui\/login/);
    expect(await page.locator("#loginName").count()).toBe(1);
    expect(problems).toEqual([]);
    await ctx.close();
  });
});

describe("what each user sees", () => {
  let orgId: string;
  beforeAll(async () => {
    orgId = await t.org("Console Org");
    const owner = await human(t, "orgowner", PASSWORD, orgId);
    const m = await rest(t.url, "POST", "/resources/v3alpha/memberships", {
      token: t.adminPat,
      body: { userId: owner, context: { organizationId: orgId }, roles: ["ORG_OWNER"] },
    });
    expect(m.status, JSON.stringify(m.body)).toBe(201);
    await human(t, "noroles", PASSWORD);
  });

  it("an organisation's owner sees that organisation and its sections only", async () => {
    const { ctx, page, problems } = await consolePage(browser);
    await page.goto(`${t.url}/ui/console/`);
    await signInAt(page, "orgowner", PASSWORD);
    await page.waitForSelector("nav.side");
    expect(await page.locator("nav.side a").allTextContents()).toEqual(["Overview", "Organizations", "Users", "Projects", "Identity providers", "Settings"]);
    expect(await page.textContent("header .org-name")).toBe("Console Org");
    // instance-wide sections are not there even by their path
    await go(page, "/events");
    await expect.poll(() => page.textContent("h1")).toBe("This page does not exist.");
    await expectAccessible(page, "not found");
    expect(problems).toEqual([]);
    await ctx.close();
  });

  it("a user without an administrative role gets a page that says so, with a link to their account", async () => {
    const { ctx, page, problems } = await consolePage(browser);
    await page.goto(`${t.url}/ui/console/`);
    await signInAt(page, "noroles", PASSWORD);
    await page.waitForSelector("h1");
    await expect.poll(() => page.textContent("h1")).toBe("No administrative access");
    expect(await page.getByRole("link", { name: "Your account" }).getAttribute("href")).toBe("/ui/login");
    await expectAccessible(page, "no access");
    expect(problems).toEqual([]);
    await ctx.close();
  });
});

describe("languages and colour schemes", () => {
  for (const [locale, colorScheme, title] of [
    ["de-DE", "dark", "Willkommen, Administrator"],
    ["fr-FR", "dark", "Bienvenue, Administrator"],
    ["en-GB", "light", "Welcome, Administrator"],
  ] as const) {
    it(`${locale} in ${colorScheme}: the browser's language, accessible`, async () => {
      const { ctx, page, problems } = await consolePage(browser, { locale, colorScheme });
      await page.goto(`${t.url}/ui/console/`);
      await signInAt(page, "admin", CHANGED);
      await page.waitForSelector("nav.side");
      expect(await page.textContent("h1")).toBe(title);
      expect(await page.getAttribute("html", "lang")).toBe(locale.slice(0, 2));
      const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      expect(background).toBe(colorScheme === "dark" ? "rgb(17, 19, 24)" : "rgb(245, 246, 248)");
      await expectAccessible(page, `${locale} ${colorScheme}`);
      expect(problems).toEqual([]);
      await ctx.close();
    });
  }

  it("the language chosen in the console is kept", async () => {
    const { ctx, page } = await consolePage(browser);
    await page.goto(`${t.url}/ui/console/`);
    await signInAt(page, "admin", CHANGED);
    await page.waitForSelector("nav.side");
    await page.getByLabel("Language").selectOption("fr");
    await expect.poll(() => page.textContent("h1")).toBe("Bienvenue, Administrator");
    await page.reload();
    await page.waitForSelector("nav.side");
    expect(await page.textContent("h1")).toBe("Bienvenue, Administrator");
    await ctx.close();
  });
});

describe("sessions of the console", () => {
  it("a second factor is asked on the way in", async () => {
    const id = await human(t, "twofactor", PASSWORD);
    await rest(t.url, "POST", "/resources/v3alpha/memberships", {
      token: t.adminPat,
      body: { userId: id, context: { instance: true }, roles: ["IAM_OWNER_VIEWER"] },
    });
    await awayFromPeriodEnd();
    const secret = (await rest(t.url, "POST", `/resources/v3alpha/users/${id}/totp`, { token: t.adminPat, body: {} })).body.secret as string;
    expect((await rest(t.url, "POST", `/resources/v3alpha/users/${id}/totp/_verify`, { token: t.adminPat, body: { code: totpCode(secret) } })).status).toBe(
      200,
    );
    const { ctx, page, problems } = await consolePage(browser);
    await page.goto(`${t.url}/ui/console/`);
    await signInAt(page, "twofactor", PASSWORD);
    await page.waitForSelector("#code");
    await page.fill("#code", totpCode(secret, 30_000));
    await page.click("button[type=submit]");
    await page.waitForSelector("nav.side");
    expect(await page.textContent("h1")).toBe("Welcome, Twofactor Tester");
    expect(problems).toEqual([]);
    await ctx.close();
  });

  it("renews its access token quietly with the refresh token before it runs out", async () => {
    const s = await startTestServer({ SVC_FIRSTINSTANCE_ADMIN_PASSWORD: FIRST, SVC_OIDC_ACCESS_TOKEN_LIFETIME: "8" }, { consoleDir: await consoleBuild() });
    try {
      const { ctx, page, problems } = await consolePage(browser);
      const grants: string[] = [];
      page.on("request", (r) => {
        if (r.url().endsWith("/oauth/v2/token")) grants.push(new URLSearchParams(r.postData() ?? "").get("grant_type") ?? "");
      });
      await page.goto(`${s.url}/ui/console/`);
      await signInAt(page, "admin", FIRST, CHANGED);
      await page.waitForSelector("nav.side");
      // the token is renewed at 80 % of its 8 s, before any call needs it: calls after its end still succeed
      await expect.poll(() => grants.filter((g) => g === "refresh_token").length, { timeout: 20_000 }).toBeGreaterThanOrEqual(2);
      await go(page, "/users");
      await page.locator("tbody tr", { hasText: "admin-service" }).waitFor();
      expect(new URL(page.url()).pathname).toBe("/ui/console/users");
      expect(grants.filter((g) => g === "authorization_code")).toHaveLength(1);
      expect(problems).toEqual([]);
      await ctx.close();
    } finally {
      await s.close();
    }
  });
});

describe("the branding's theme", () => {
  it("a theme mode the branding fixes wins over the browser's scheme, and the console offers no other", async () => {
    const set = await rest(t.url, "PATCH", "/settings/v3alpha/branding", { token: t.adminPat, body: { themeMode: { set: "light" } } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect((await rest(t.url, "POST", "/settings/v3alpha/branding/_activate", { token: t.adminPat, body: {} })).status).toBe(200);
    try {
      const { ctx, page } = await consolePage(browser, { colorScheme: "dark" });
      await page.goto(`${t.url}/ui/console/`);
      await signInAt(page, "admin", CHANGED);
      await page.waitForSelector("nav.side");
      await expect.poll(() => page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe("rgb(245, 246, 248)");
      expect(await page.getByLabel("Colour scheme").count()).toBe(0);
      await ctx.close();
    } finally {
      await rest(t.url, "PATCH", "/settings/v3alpha/branding", { token: t.adminPat, body: { themeMode: { reset: true } } });
      await rest(t.url, "POST", "/settings/v3alpha/branding/_activate", { token: t.adminPat, body: {} });
    }
  });
});

describe("the keyboard", () => {
  it("reaches the skip link first, then the main content and every section by Tab", async () => {
    const { ctx, page } = await consolePage(browser);
    await page.goto(`${t.url}/ui/console/`);
    await signInAt(page, "admin", CHANGED);
    await page.waitForSelector("nav.side");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
    await page.keyboard.press("Enter");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("main");
    // every section's link can be reached and followed with the keyboard alone
    await page.locator("nav.side a", { hasText: "Users" }).focus();
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/ui\/console\/users$/);
    await page.locator("tbody tr").first().waitFor();
    await ctx.close();
  });
});
