import * as client from "openid-client";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { MovableClock } from "../support/clock.js";
import { addHuman, createApp, rpConfig } from "../oidc/rp.js";

// Security review #18: the browser callback checked only prompt=login. alice signs in; seconds later the client asks
// with max_age=1, the login UI asks her to sign in again, but the browser posts the old session to the account
// choice instead, and the callback gave a code whose ID token has the old auth_time (OIDC Core §3.1.2.1: the OP
// MUST actively re-authenticate).

const PASSWORD = "Secr3t!pass";
const FORM = { "content-type": "application/x-www-form-urlencoded" };
let t: TestServer;
// The server's time: max_age and auth requests are decided by it, so the tests move it instead of waiting.
const clock = new MovableClock();
let web: Awaited<ReturnType<typeof createApp>>;
let config: client.Configuration;

const authorizeParams = (extra: Record<string, string> = {}) =>
  new URLSearchParams({ client_id: web.clientId, redirect_uri: "https://rp.example.com/cb", response_type: "code", scope: "openid", ...extra });
/** The login page the authorize endpoint sent the browser to: its CSRF cookie and token and the flow's return address. */
async function loginPage(location: string, agent: string) {
  const page = await rest(t.url, "GET", location, { headers: { cookie: agent } });
  const body = page.body as string;
  return {
    csrfCookie: String(page.headers["set-cookie"]).split(";")[0]!,
    csrf: body.match(/name="csrf" value="([^"]+)"/)![1]!,
    returnTo: body.match(/name="return_to" value="([^"]+)"/)![1]!.replace(/&amp;/g, "&"),
  };
}

beforeAll(async () => {
  t = await startTestServer({}, { clock });
  await addHuman(t, "alice", PASSWORD);
  web = await createApp(t, "web", {
    redirectUris: ["https://rp.example.com/cb"],
    grantTypes: ["OIDC_GRANT_TYPE_AUTHORIZATION_CODE"],
    appType: "OIDC_APP_TYPE_WEB",
    authMethodType: "OIDC_AUTH_METHOD_TYPE_BASIC",
  });
  config = await rpConfig(t.url, web.clientId, web.clientSecret, client.ClientSecretBasic(web.clientSecret));
});
afterAll(() => t?.close());

describe("security review #18: max_age at the browser callback", () => {
  it("an old session handed back to the callback gives login_required, not a code with a stale auth_time", async () => {
    // alice signs in for a first request; the browser keeps its agent cookie and learns the session's ID
    const first = await rest(t.url, "GET", `/oauth/v2/authorize?${authorizeParams()}`);
    const login = await loginPage(first.headers.location!, "");
    const signedIn = await rest(t.url, "POST", "/ui/login/password", {
      body: new URLSearchParams({ loginName: "alice", password: PASSWORD, csrf: login.csrf, return_to: login.returnTo }).toString(),
      headers: { ...FORM, cookie: login.csrfCookie },
    });
    expect(signedIn.status).toBe(303);
    const agent = String(signedIn.headers["set-cookie"]).split(";")[0]!;
    const sessionId = new URL(signedIn.headers.location!, t.url).searchParams.get("session")!;

    // max_age=1 is decided by the server's clock: moved past it. The callback's rule (a sign-in made for the request,
    // up to a second before it arrived) compares the request's creation with the sign-in's auth time: the session
    // event's created_at, set by the database, and so the request's is the real time too (command/auth-requests.ts).
    // More than that second must really pass.
    await new Promise((r) => setTimeout(r, 1100));
    clock.advance(1500);
    // max_age=1: the session is too old, so the browser is sent to sign in again
    const aged = await rest(t.url, "GET", `/oauth/v2/authorize?${authorizeParams({ max_age: "1", state: "s-18" })}`, { headers: { cookie: agent } });
    expect(aged.status).toBe(303);
    expect(new URL(aged.headers.location!, t.url).searchParams.get("prompt")).toBe("login");
    // ... but posts the old session to the account choice instead
    const again = await loginPage(aged.headers.location!, agent);
    const chosen = await rest(t.url, "POST", "/ui/login/select", {
      body: new URLSearchParams({ sessionId, csrf: again.csrf, return_to: again.returnTo }).toString(),
      headers: { ...FORM, cookie: `${again.csrfCookie}; ${agent}` },
    });
    expect(chosen.status).toBe(303);
    const back = await rest(t.url, "GET", chosen.headers.location!, { headers: { cookie: agent } });
    expect(back.status).toBe(303);
    const landed = new URL(back.headers.location!);
    if (landed.searchParams.get("code")) {
      const tokens = await client.authorizationCodeGrant(config, landed, { expectedState: "s-18" });
      throw new Error(
        `a code was issued; its ID token's auth_time is ${Math.floor(Date.now() / 1000) - (decodeJwt(tokens.id_token!).auth_time as number)} s old`,
      );
    }
    expect(landed.searchParams.get("error")).toBe("login_required");
    expect(landed.searchParams.get("state")).toBe("s-18");
  });

  it("a fresh sign-in for the request completes it, even with max_age=0 (prompt=login's equivalent)", async () => {
    const start = await rest(t.url, "GET", `/oauth/v2/authorize?${authorizeParams({ max_age: "0" })}`);
    const login = await loginPage(start.headers.location!, "");
    const signedIn = await rest(t.url, "POST", "/ui/login/password", {
      body: new URLSearchParams({ loginName: "alice", password: PASSWORD, csrf: login.csrf, return_to: login.returnTo }).toString(),
      headers: { ...FORM, cookie: login.csrfCookie },
    });
    const agent = String(signedIn.headers["set-cookie"]).split(";")[0]!;
    // a slow browser: the sign-in is more than max_age old when the callback sees it, but it was made for this request
    clock.advance(1200);
    const back = await rest(t.url, "GET", signedIn.headers.location!, { headers: { cookie: agent } });
    const tokens = await client.authorizationCodeGrant(config, new URL(back.headers.location!));
    expect(Math.floor(Date.now() / 1000) - (decodeJwt(tokens.id_token!).auth_time as number)).toBeLessThan(10);
  });
});
