import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { addHuman, codeOverHttp, createApp } from "../oidc/rp.js";
import { MovableClock } from "../support/clock.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

// Security review #14: sessions ended, but the tokens bound to them (sid) did not, and browser sessions never
// ended at all. Short lifetimes through the configuration: a browser session lives 4 s unused, 10 s at most
// (long enough for a sign-in and a code redemption on a busy machine).
//
// The lifetimes are decided on the server's clock, which the tests move instead of waiting. A browser session's
// auth time, though, is its event's created_at, set by the database with the real time: moved past a lifetime, the
// clock would age every session signed in after it. So each test starts on the real time (`reset`), and the one
// whose rule compares a new sign-in's auth time with the clock waits for real (see there).
let t: TestServer;
const clock = new MovableClock();
let web: Awaited<ReturnType<typeof createApp>>;
const PASSWORD = "Secr3t!pass";
const REDIRECT = "https://rp.example.com/cb";
const IDLE_MS = 4000;
const MAX_MS = 10_000;

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;
const token = (body: Record<string, string>) =>
  rest(t.url, "POST", "/oauth/v2/token", {
    body: new URLSearchParams(body).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", authorization: basic(web.clientId, web.clientSecret) },
  });
const introspect = async (accessToken: string) =>
  (
    await rest(t.url, "POST", "/oauth/v2/introspect", {
      body: new URLSearchParams({ token: accessToken }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: basic(web.clientId, web.clientSecret) },
    })
  ).body as { active: boolean; sid?: string };
const authorizeParams = (scope = "openid offline_access") => ({
  client_id: web.clientId,
  response_type: "code",
  redirect_uri: REDIRECT,
  scope,
  state: "s",
  nonce: "n",
});

/** Signs in through the login UI and redeems the code: the tokens, and the browser's session cookie. */
async function signIn(username: string) {
  const { code, agent } = await codeOverHttp(t, authorizeParams(), username, PASSWORD);
  const issued = await token({ grant_type: "authorization_code", code, redirect_uri: REDIRECT });
  expect(issued.status, JSON.stringify(issued.body)).toBe(200);
  return { access: issued.body.access_token as string, refresh: issued.body.refresh_token as string, agent };
}

beforeAll(async () => {
  t = await startTestServer({ SVC_SESSION_IDLE: String(IDLE_MS / 1000), SVC_SESSION_LIFETIME: String(MAX_MS / 1000) }, { clock });
  web = await createApp(t, "web", {
    redirectUris: [REDIRECT],
    grantTypes: ["OIDC_GRANT_TYPE_AUTHORIZATION_CODE", "OIDC_GRANT_TYPE_REFRESH_TOKEN"],
    appType: "OIDC_APP_TYPE_WEB",
    authMethodType: "OIDC_AUTH_METHOD_TYPE_BASIC",
  });
  await addHuman(t, "erin", PASSWORD);
});
afterAll(() => t?.close());
afterEach(() => clock.reset());

describe("session lifetimes bound tokens (security review #14)", () => {
  it("a browser session left unused ends with its tokens and SSO; an offline refresh token is not bound to it", async () => {
    const signedIn = await signIn("erin");
    expect(await introspect(signedIn.access)).toMatchObject({ active: true });

    clock.advance(IDLE_MS + 1000);

    expect((await introspect(signedIn.access)).active).toBe(false);
    expect((await rest(t.url, "GET", "/oidc/v1/userinfo", { token: signedIn.access })).status).toBe(401);
    const silent = await rest(t.url, "GET", `/oauth/v2/authorize?${new URLSearchParams({ ...authorizeParams(), prompt: "none" })}`, {
      headers: { cookie: signedIn.agent },
    });
    expect(new URL(silent.headers.location!).searchParams.get("error")).toBe("login_required");
    // offline_access asks for access while the user is not signed in (OIDC Core §11): its tokens carry no sid now.
    const refreshed = await token({ grant_type: "refresh_token", refresh_token: signedIn.refresh });
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    const offline = await introspect(refreshed.body.access_token);
    expect(offline.active).toBe(true);
    expect(offline.sid).toBeUndefined();
  });

  it("signing in again after the end starts a new session: the ended one's tokens stay dead", async () => {
    // found in review: the browser's row was re-authenticated, and with it the sid its old tokens carry.
    // Real time must pass here: a revived session's auth time would be the database's, so on a moved clock it
    // would look as ended as the old one, and the revival could not show.
    const signedIn = await signIn("erin");
    await sleep(IDLE_MS + 1000);
    expect((await introspect(signedIn.access)).active).toBe(false);
    const page = await rest(t.url, "GET", "/ui/login", { headers: { cookie: signedIn.agent } });
    const csrfCookie = String(page.headers["set-cookie"]).split(";")[0]!;
    const csrf = (page.body as string).match(/name="csrf" value="([^"]+)"/)![1]!;
    const again = await rest(t.url, "POST", "/ui/login/password", {
      body: new URLSearchParams({ loginName: "erin", password: PASSWORD, csrf }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: `${signedIn.agent}; ${csrfCookie}`, origin: t.url },
    });
    expect(again.status).toBe(200);
    expect((await introspect(signedIn.access)).active).toBe(false);
  });

  it("use keeps a browser session past its idle time, but not past its absolute lifetime", async () => {
    const started = clock.now();
    const signedIn = await signIn("erin");
    let lastActive = 0;
    let ended = 0;
    // Used every STEP_MS of the server's clock (a few of them per idle lifetime).
    const STEP_MS = 1000;
    while (!ended && clock.now() - started < MAX_MS + 6000) {
      if ((await introspect(signedIn.access)).active) lastActive = clock.now();
      else ended = clock.now();
      clock.advance(STEP_MS);
    }
    // Alive well past the idle lifetime, ended by the absolute one.
    expect(lastActive - started).toBeGreaterThan(IDLE_MS + 1500);
    expect(ended).toBeGreaterThan(0);
    expect(ended - started).toBeLessThan(MAX_MS + 4000);
  });

  it("a session of the sessions API ends at its lifetime, and so do the tokens issued through it", async () => {
    const start = await rest(t.url, "GET", `/oauth/v2/authorize?${new URLSearchParams(authorizeParams("openid"))}`);
    const authRequest = new URL(start.headers.location!, t.url).searchParams.get("return_to")!.split("id=")[1]!;
    const created = await rest(t.url, "POST", "/resources/v3alpha/sessions", {
      token: t.adminPat,
      body: { checks: { user: { loginName: "erin" }, password: { password: PASSWORD } }, lifetime: "4s" },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const createdAt = clock.now();
    const session = { sessionId: created.body.details.id as string, sessionToken: created.body.sessionToken as string };
    const callback = await rest(t.url, "POST", `/resources/v3alpha/auth_requests/${authRequest}/_callback`, { token: t.adminPat, body: { session } });
    expect(callback.status, JSON.stringify(callback.body)).toBe(200);
    const code = new URL(callback.body.callbackUrl).searchParams.get("code")!;
    const issued = await token({ grant_type: "authorization_code", code, redirect_uri: REDIRECT });
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);

    let active = true;
    while (active && clock.now() - createdAt < 8000) {
      active = (await introspect(issued.body.access_token)).active;
      if (active) clock.advance(250);
    }
    expect(active).toBe(false);
    expect(clock.now() - createdAt).toBeGreaterThan(3500);
  });
});
