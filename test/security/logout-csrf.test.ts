import * as client from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { addHuman, createApp, rpConfig } from "../oidc/rp.js";

// Security review #16: with any signature-valid id_token_hint (bob's, expired) the end-session endpoint ended every
// session of the browser without asking, and with them all their access tokens. A top-level navigation carries the
// Lax agent cookie, so any page could log alice out. RP-Initiated Logout 1.0 §2: the OP MUST ask when the hint does
// not belong to the current session; and only the named session ends.

const PASSWORD = "Secr3t!pass";
const FORM = { "content-type": "application/x-www-form-urlencoded" };
const BYE = "https://rp.example.com/bye";
let t: TestServer;
let web: Awaited<ReturnType<typeof createApp>>;
let config: client.Configuration;

const cookieOf = (setCookie: unknown) => String(setCookie).split(";")[0]!;
/** The page's CSRF cookie and token and its hidden return address. */
function formOf(page: { body: unknown; headers: Record<string, unknown> }) {
  const body = page.body as string;
  return {
    csrfCookie: cookieOf(page.headers["set-cookie"]),
    csrf: body.match(/name="csrf" value="([^"]+)"/)![1]!,
    returnTo: body.match(/name="return_to" value="([^"]+)"/)![1]!.replace(/&amp;/g, "&"),
  };
}

/** A browser (its agent cookie, none at first) signs `username` in through web's code flow; the agent and the tokens. */
async function signIn(username: string, agent = "") {
  const params = { client_id: web.clientId, redirect_uri: "https://rp.example.com/cb", response_type: "code", scope: "openid", prompt: "login" };
  const start = await rest(t.url, "GET", `/oauth/v2/authorize?${new URLSearchParams(params)}`, { headers: { cookie: agent } });
  const login = formOf(await rest(t.url, "GET", start.headers.location!, { headers: { cookie: agent } }));
  const signedIn = await rest(t.url, "POST", "/ui/login/password", {
    body: new URLSearchParams({ loginName: username, password: PASSWORD, csrf: login.csrf, return_to: login.returnTo }).toString(),
    headers: { ...FORM, cookie: [login.csrfCookie, agent].filter(Boolean).join("; ") },
  });
  expect(signedIn.status).toBe(303);
  const browser = agent || cookieOf(signedIn.headers["set-cookie"]);
  const back = await rest(t.url, "GET", signedIn.headers.location!, { headers: { cookie: browser } });
  return { agent: browser, tokens: await client.authorizationCodeGrant(config, new URL(back.headers.location!)) };
}
const endSession = (agent: string, idToken: string) =>
  rest(t.url, "GET", `/oidc/v1/end_session?${new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: BYE, state: "st" })}`, {
    headers: { cookie: agent },
  });
const active = async (accessToken: string) => (await client.tokenIntrospection(config, accessToken)).active;

beforeAll(async () => {
  t = await startTestServer();
  for (const name of ["alice", "bob", "carol"]) await addHuman(t, name, PASSWORD);
  web = await createApp(t, "web", {
    redirectUris: ["https://rp.example.com/cb"],
    postLogoutRedirectUris: [BYE],
    grantTypes: ["OIDC_GRANT_TYPE_AUTHORIZATION_CODE"],
    appType: "OIDC_APP_TYPE_WEB",
    authMethodType: "OIDC_AUTH_METHOD_TYPE_BASIC",
  });
  config = await rpConfig(t.url, web.clientId, web.clientSecret, client.ClientSecretBasic(web.clientSecret));
});
afterAll(() => t?.close());

describe("security review #16: logout CSRF through end_session", () => {
  it("another user's ID token as hint ends nothing: alice is asked first, and her sessions end only once she confirms", async () => {
    const alice = await signIn("alice");
    const bob = await signIn("bob");
    const forged = await endSession(alice.agent, bob.tokens.id_token!);
    expect(forged.status).toBe(303);
    const confirm = new URL(forged.headers.location!, t.url);
    expect(confirm.pathname).toBe("/ui/login/logout");
    expect(await active(alice.tokens.access_token)).toBe(true);
    expect(await active(bob.tokens.access_token)).toBe(true);

    // the confirmation is a form with a CSRF token; confirmed, it signs the browser out and returns to the client
    const page = formOf(await rest(t.url, "GET", `${confirm.pathname}${confirm.search}`, { headers: { cookie: alice.agent } }));
    const withoutToken = await rest(t.url, "POST", "/ui/login/logout", {
      body: new URLSearchParams({ return_to: page.returnTo }).toString(),
      headers: { ...FORM, cookie: `${page.csrfCookie}; ${alice.agent}` },
    });
    expect(withoutToken.status).toBe(403);
    expect(await active(alice.tokens.access_token)).toBe(true);
    const confirmed = await rest(t.url, "POST", "/ui/login/logout", {
      body: new URLSearchParams({ csrf: page.csrf, return_to: page.returnTo }).toString(),
      headers: { ...FORM, cookie: `${page.csrfCookie}; ${alice.agent}` },
    });
    expect(confirmed.status).toBe(303);
    const done = await rest(t.url, "GET", confirmed.headers.location!);
    expect(done.headers.location).toBe(`${BYE}?state=st`);
    expect(await active(alice.tokens.access_token)).toBe(false);
    expect(await active(bob.tokens.access_token)).toBe(true);
  });

  it("the hint of one of the browser's sessions ends that session at once, and only that one", async () => {
    const alice = await signIn("alice");
    const carol = await signIn("carol", alice.agent);
    const r = await endSession(alice.agent, alice.tokens.id_token!);
    expect(r.status).toBe(303);
    expect(r.headers.location).toBe(`${BYE}?state=st`);
    expect(await active(alice.tokens.access_token)).toBe(false);
    expect(await active(carol.tokens.access_token)).toBe(true);
    // the same hint again names no session of the browser any more: now the user is asked
    const again = await endSession(alice.agent, alice.tokens.id_token!);
    expect(new URL(again.headers.location!, t.url).pathname).toBe("/ui/login/logout");
    expect(await active(carol.tokens.access_token)).toBe(true);
  });
});
