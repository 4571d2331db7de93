import http from "node:http";
import type { AddressInfo } from "node:net";
import * as client from "openid-client";
import type { Browser, Page } from "playwright-core";
import { rest } from "../support/clients.js";
import type { TestServer } from "../support/server.js";

/** A relying party's redirect endpoint on loopback: it records what arrives (query or form_post) and says ok. */
export async function startRedirectCatcher() {
  const received: { method: string; url: string; body: string }[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      received.push({ method: req.method ?? "", url: req.url ?? "", body });
      res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>rp</title><p>ok</p>");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, received, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** A human with a password, made through the API; its ID. */
export async function addHuman(t: TestServer, username: string, password: string): Promise<string> {
  const name = username[0]!.toUpperCase() + username.slice(1);
  const r = await rest(t.url, "POST", "/resources/v3alpha/users", {
    token: t.adminPat,
    body: {
      username,
      human: { profile: { givenName: name, familyName: "Tester" }, email: { address: `${username}@example.com`, isVerified: true }, password: { password } },
    },
  });
  if (r.status !== 201) throw new Error(`user: ${JSON.stringify(r.body)}`);
  return r.body.details.id as string;
}

/** An OIDC application of a new project, made through the API. */
export async function createApp(t: TestServer, name: string, oidc: Record<string, unknown>) {
  const admin = { token: t.adminPat };
  const project = await rest(t.url, "POST", "/resources/v3alpha/projects", { ...admin, body: { name: `${name} project` } });
  const app = await rest(t.url, "POST", `/resources/v3alpha/projects/${project.body.details.id}/applications`, { ...admin, body: { name, oidc } });
  if (app.status !== 201) throw new Error(`app: ${JSON.stringify(app.body)}`);
  return {
    clientId: app.body.clientId as string,
    clientSecret: app.body.clientSecret as string,
    projectId: project.body.details.id as string,
    appId: app.body.details.id as string,
  };
}

export async function rpConfig(issuer: string, clientId: string, secret?: string, auth?: client.ClientAuth) {
  return client.discovery(new URL(issuer), clientId, secret, auth, { execute: [client.allowInsecureRequests] });
}

/** Signs in through the login UI on the page (login name, then password). */
export async function signInOnPage(page: Page, username: string, password: string) {
  await page.fill("#loginName", username);
  await page.click("button[type=submit]");
  await page.fill("#password", password);
  await page.click("button[type=submit]");
}

export async function newPage(browser: Browser, js = false) {
  const ctx = await browser.newContext({ javaScriptEnabled: js });
  return { ctx, page: await ctx.newPage() };
}

/**
 * Signs in over HTTP the way a browser would (cookies, CSRF token) after GET /oauth/v2/authorize with `params`,
 * and returns the code the client gets, where the browser was sent and its session cookie (`svc_agent=...`).
 */
export async function codeOverHttp(
  t: TestServer,
  params: Record<string, string>,
  username: string,
  password: string,
): Promise<{ code: string; location: string; agent: string }> {
  const start = await rest(t.url, "GET", `/oauth/v2/authorize?${new URLSearchParams(params)}`);
  if (start.status !== 303) throw new Error(`authorize answered ${start.status}: ${String(start.body)}`);
  const login = await rest(t.url, "GET", start.headers.location!);
  const csrfCookie = String(login.headers["set-cookie"]).split(";")[0]!;
  const form = (login.body as string).match(/name="csrf" value="([^"]+)"/)![1]!;
  const returnTo = (login.body as string).match(/name="return_to" value="([^"]+)"/)![1]!.replace(/&amp;/g, "&");
  const signedIn = await rest(t.url, "POST", "/ui/login/password", {
    body: new URLSearchParams({ loginName: username, password, csrf: form, return_to: returnTo }).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: csrfCookie },
  });
  if (signedIn.status !== 303) throw new Error(`sign-in answered ${signedIn.status}`);
  const agent = String(signedIn.headers["set-cookie"]).split(";")[0]!;
  const back = await rest(t.url, "GET", signedIn.headers.location!, { headers: { cookie: agent } });
  const location = back.headers.location!;
  return { code: new URL(location).searchParams.get("code") ?? "", location, agent };
}

/** A confidential web application of the authorization code flow (client_secret_basic) redirecting to `redirectTo`/cb. */
export function webApp(t: TestServer, redirectTo: { origin: string }, name = "web") {
  return createApp(t, name, {
    redirectUris: [`${redirectTo.origin}/cb`],
    grantTypes: ["OIDC_GRANT_TYPE_AUTHORIZATION_CODE"],
    appType: "OIDC_APP_TYPE_WEB",
    authMethodType: "OIDC_AUTH_METHOD_TYPE_BASIC",
  });
}

/**
 * Starts a code flow with PKCE, state and nonce in the page, for an application made by `webApp`. `finish`
 * redeems the code where the page landed and returns the tokens, the ID token's claims and the access token's
 * introspection.
 */
export async function startCodeFlow(
  page: Page,
  a: { issuer: string; app: { clientId: string; clientSecret: string }; redirectTo: { origin: string }; extra?: Record<string, string> },
) {
  const config = await rpConfig(a.issuer, a.app.clientId, a.app.clientSecret, client.ClientSecretBasic(a.app.clientSecret));
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: `${a.redirectTo.origin}/cb`,
    scope: "openid",
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state,
    nonce,
    ...a.extra,
  });
  await page.goto(url.href);
  return async () => {
    await page.waitForURL((u) => u.pathname === "/cb", { timeout: 5_000 }).catch(() => undefined);
    const landed = new URL(page.url());
    if (landed.pathname !== "/cb") throw new Error(`the flow ended at ${landed.pathname}, not at the relying party`);
    const tokens = await client.authorizationCodeGrant(config, landed, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    return { tokens, claims: tokens.claims()!, introspection: await client.tokenIntrospection(config, tokens.access_token) };
  };
}
