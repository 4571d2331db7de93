import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { addHuman } from "../oidc/rp.js";

// Security review #8: `return_to` must only ever lead back to this server's own pages, whatever a browser makes of
// the Location header (WHATWG URL parsing deletes TAB, LF and CR anywhere, reads `\` as `/`, resolves dot segments).

let t: TestServer;
const PASSWORD = "Secr3t!pass";
const form = { "content-type": "application/x-www-form-urlencoded" };

beforeAll(async () => {
  t = await startTestServer();
  await addHuman(t, "wanderer", PASSWORD);
});
afterAll(async () => {
  await t?.close();
});

/** Values an attacker puts into `return_to`, each meant to send the browser to evil.example after the form. */
const tricks = [
  "/\t/evil.example/phish",
  "/\n/evil.example/phish",
  "/\r/evil.example/phish",
  "\t//evil.example/phish",
  " //evil.example/phish",
  "/\\evil.example/phish",
  "/\\/evil.example/phish",
  "\\\\evil.example/phish",
  "//evil.example/phish",
  "///evil.example/phish",
  "/%09/evil.example/phish",
  "/%2F/evil.example/phish",
  "/.//evil.example/phish",
  "/./\t/evil.example/phish",
  "/oauth/v2/../..//evil.example/phish",
  "/ui/login/..//evil.example/phish",
  "https://evil.example/phish",
  "http:evil.example/phish",
  "http:/evil.example/phish",
  "HTTPS://evil.example/phish",
  "javascript:alert(document.domain)",
  "data:text/html,<script>alert(1)</script>",
  "/\u0000/evil.example",
  "/\u000b/evil.example",
  "/\u007f/evil.example",
  "/ui/login\t/../..//evil.example",
  "/oauth/v2/authorize/callback?id=1#@evil.example",
  "/anything/on/this/server",
];

/**
 * Where a browser would go with the answer's Location (WHATWG resolution against the page's URL), or undefined when
 * the answer is no redirect. A redirect must be to this server's own sign-in or OAuth pages, written plainly.
 */
function expectSafe(r: { status: number; headers: Record<string, unknown> }, trick: string) {
  const location = r.headers.location as string | undefined;
  if (r.status !== 303) {
    expect(location, JSON.stringify(trick)).toBeUndefined();
    return;
  }
  expect(location, JSON.stringify(trick)).toMatch(/^\/[\x21-\x7e]*$/);
  const target = new URL(location!, `${t.url}/ui/login/password`);
  expect(target.origin, `${JSON.stringify(trick)} -> ${JSON.stringify(location)}`).toBe(t.url);
  expect(target.pathname, JSON.stringify(trick)).toMatch(/^\/(oauth\/v2\/|ui\/login(\/|$))/);
}

/** The login page's CSRF cookie and token, as a browser holds them after GET /ui/login. */
async function loginPage(query = "") {
  const page = await rest(t.url, "GET", `/ui/login${query}`);
  const cookie = String(page.headers["set-cookie"]).split(";")[0]!;
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.body as string)![1]!;
  return { cookie, csrf };
}

describe("return_to never leads off the server (security review #8)", () => {
  it("after a sign-in", async () => {
    for (const trick of tricks) {
      const { cookie, csrf } = await loginPage();
      const r = await rest(t.url, "POST", "/ui/login/password", {
        body: new URLSearchParams({ loginName: "wanderer", password: PASSWORD, csrf, return_to: trick }).toString(),
        headers: { ...form, cookie },
      });
      expect([200, 303, 400], JSON.stringify(trick)).toContain(r.status);
      expectSafe(r, trick);
    }
  });

  it("after a logout", async () => {
    for (const trick of tricks) {
      const { cookie, csrf } = await loginPage();
      const r = await rest(t.url, "POST", "/ui/login/logout", {
        body: new URLSearchParams({ csrf, return_to: trick }).toString(),
        headers: { ...form, cookie },
      });
      expect([200, 303, 400], JSON.stringify(trick)).toContain(r.status);
      expectSafe(r, trick);
    }
  });

  it("a page's links and hidden fields carry only the normalised path", async () => {
    const page = await rest(t.url, "GET", `/ui/login?${new URLSearchParams({ return_to: "/\t/evil.example/phish" })}`);
    expect(page.body as string).not.toContain("evil.example");
  });

  it("the server's own pages still work, normalised: the authorization callback and the end-session page", async () => {
    const callback = "/oauth/v2/authorize/callback?id=123";
    const { cookie, csrf } = await loginPage();
    const signedIn = await rest(t.url, "POST", "/ui/login/password", {
      body: new URLSearchParams({ loginName: "wanderer", password: PASSWORD, csrf, return_to: callback }).toString(),
      headers: { ...form, cookie },
    });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.location).toMatch(/^\/oauth\/v2\/authorize\/callback\?id=123&session=\d+$/);
    // Dot segments and odd spellings are resolved as a browser would, then written plainly.
    const odd = await loginPage();
    const normalised = await rest(t.url, "POST", "/ui/login/logout", {
      body: new URLSearchParams({ csrf: odd.csrf, return_to: "/oauth/v2/x/../end_session/done?a=<b>" }).toString(),
      headers: { ...form, cookie: odd.cookie },
    });
    expect(normalised.status).toBe(303);
    expect(normalised.headers.location).toBe("/oauth/v2/end_session/done?a=%3Cb%3E");
    // An absolute URL of this very server is its path.
    const own = await loginPage();
    const absolute = await rest(t.url, "POST", "/ui/login/logout", {
      body: new URLSearchParams({ csrf: own.csrf, return_to: `${t.url}/ui/login?x=1` }).toString(),
      headers: { ...form, cookie: own.cookie },
    });
    expect(absolute.status).toBe(303);
    expect(absolute.headers.location).toBe("/ui/login?x=1");
  });
});
