import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/browser.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { addHuman } from "../oidc/rp.js";

// Security review #24, login CSRF: the attacker takes a valid CSRF cookie and token from GET /ui/login and makes the
// victim's browser post the attacker's credentials, so that the victim works in the attacker's account. From a
// sibling host of the same site the attacker can plant cookies (cookie tossing) and SameSite does not stop the post.

const form = { "content-type": "application/x-www-form-urlencoded" };
const PASSWORD = "Secr3t!pass";

/** What one browser (one cookie jar) holds after GET /ui/login: the CSRF cookie as it sends it back, and the form's token. */
async function loginPage(t: TestServer) {
  const page = await rest(t.url, "GET", "/ui/login");
  const setCookie = String(page.headers["set-cookie"]);
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.body as string)![1]!;
  return { setCookie, cookie: setCookie.split(";")[0]!, value: setCookie.split(";")[0]!.split("=")[1]!, csrf };
}

const signIn = (t: TestServer, a: { cookie: string; csrf: string; headers?: Record<string, string> }) =>
  rest(t.url, "POST", "/ui/login/password", {
    body: new URLSearchParams({ loginName: "mallory", password: PASSWORD, csrf: a.csrf }).toString(),
    headers: { ...form, cookie: a.cookie, ...a.headers },
  });

const signedIn = (r: { status: number; body: unknown }) => r.status === 200 && /Signed in as/.test(String(r.body));

describe("behind https (SVC_EXTERNAL_SECURE): the CSRF cookie cannot be planted by a sibling host", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ SVC_EXTERNAL_SECURE: "true" });
    await addHuman(t, "mallory", PASSWORD);
  });
  afterAll(async () => {
    await t?.close();
  });

  it("the cookie is __Host- (Secure, Path=/, no Domain), and the normal flow signs in", async () => {
    const victim = await loginPage(t);
    expect(victim.setCookie).toMatch(/^__Host-svc_csrf=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Secure$/);
    const own = `https://127.0.0.1:${t.port}`;
    expect(signedIn(await signIn(t, { ...victim, headers: { origin: own, "sec-fetch-site": "same-origin" } }))).toBe(true);
  });

  it("refuses a token obtained by another browser, with that browser's cookie tossed into the victim's", async () => {
    const attacker = await loginPage(t);
    const victim = await loginPage(t);
    // A sibling host can set `svc_csrf` (Domain=the site), never `__Host-svc_csrf`: the victim's browser then sends
    // the attacker's value under the plain name, next to (or instead of) its own.
    for (const cookie of [`svc_csrf=${attacker.value}`, `${victim.cookie}; svc_csrf=${attacker.value}`, `svc_csrf=${attacker.value}; ${victim.cookie}`]) {
      const r = await signIn(t, { cookie, csrf: attacker.csrf });
      expect(r.status, cookie).toBe(403);
      expect(signedIn(r)).toBe(false);
    }
    // The victim's own cookie with the attacker's token: as before, refused.
    expect((await signIn(t, { cookie: victim.cookie, csrf: attacker.csrf })).status).toBe(403);
  });
});

describe("over plain http (development): posts from another origin or a sibling host are refused", () => {
  let t: TestServer;
  let browser: Browser;
  beforeAll(async () => {
    t = await startTestServer();
    browser = await launchChromium();
    await addHuman(t, "mallory", PASSWORD);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("refuses a foreign Origin, and Sec-Fetch-Site cross-site or same-site, even with a matching cookie and token", async () => {
    const sibling = `http://evil.localhost:${t.port}`;
    const foreign: Record<string, string>[] = [
      { origin: "https://evil.example" },
      { origin: sibling },
      { origin: `https://127.0.0.1:${t.port}` },
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
      { "sec-fetch-site": "same-site", origin: "null" },
      { "sec-fetch-site": "same-origin", origin: sibling },
    ];
    for (const headers of foreign) {
      const pair = await loginPage(t);
      const r = await signIn(t, { ...pair, headers });
      expect(r.status, JSON.stringify(headers)).toBe(403);
      expect(String(r.body)).toMatch(/form expired or was not sent from this site/);
    }
  });

  it("accepts the headers a browser sends with the login page's own forms", async () => {
    const browsers: Record<string, string>[] = [
      { origin: t.url, "sec-fetch-site": "same-origin" },
      // The pages' Referrer-Policy no-referrer makes browsers send Origin: null on their own forms.
      { origin: "null", "sec-fetch-site": "same-origin" },
      { origin: "null" },
      {},
    ];
    for (const headers of browsers) {
      const pair = await loginPage(t);
      expect(signedIn(await signIn(t, { ...pair, headers })), JSON.stringify(headers)).toBe(true);
    }
  });

  it("a real browser signs in through the forms", async () => {
    const ctx = await browser.newContext({ javaScriptEnabled: false });
    const page = await ctx.newPage();
    const sent: Promise<Record<string, string>>[] = [];
    page.on("request", (r) => {
      if (r.method() === "POST") sent.push(r.allHeaders());
    });
    await page.goto(`${t.url}/ui/login`);
    await page.fill("#loginName", "mallory");
    await page.click("button[type=submit]");
    await page.fill("#password", PASSWORD);
    await page.click("button[type=submit]");
    expect(await page.textContent("h1")).toBe("Signed in as");
    // What the check must let through: Origin null (the pages' no-referrer policy), Sec-Fetch-Site same-origin.
    const headers = await Promise.all(sent);
    expect(headers.map((h) => [h.origin, h["sec-fetch-site"]])).toEqual([
      ["null", "same-origin"],
      ["null", "same-origin"],
    ]);
    await ctx.close();
  });
});
