import { createHash } from "node:crypto";
import * as client from "openid-client";
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from "jose";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/browser.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { createApp, newPage, rpConfig, signInOnPage, startRedirectCatcher } from "./rp.js";

let t: TestServer;
let browser: Browser;
let rp: Awaited<ReturnType<typeof startRedirectCatcher>>;
let web: Awaited<ReturnType<typeof createApp>>;
let spa: Awaited<ReturnType<typeof createApp>>;
let userId: string;
const PASSWORD = "Secr3t!pass";

/** at_hash / c_hash of an RS256 ID token (OIDC Core 3.1.3.6, 3.2.2.9): base64url of the left half of SHA-256 of the ASCII value. */
const halfSha256 = (value: string) => createHash("sha256").update(Buffer.from(value, "ascii")).digest().subarray(0, 16).toString("base64url");

beforeAll(async () => {
  t = await startTestServer();
  browser = await launchChromium();
  rp = await startRedirectCatcher();
  const user = await rest(t.url, "POST", "/resources/v3alpha/users", {
    token: t.adminPat,
    body: {
      username: "alice",
      human: {
        profile: { givenName: "Alice", familyName: "Liddell" },
        email: { address: "alice@example.com", isVerified: true },
        password: { password: PASSWORD },
      },
    },
  });
  userId = user.body.details.id;
  web = await createApp(t, "web", {
    redirectUris: [`${rp.origin}/cb`],
    postLogoutRedirectUris: [`${rp.origin}/bye`],
    grantTypes: ["OIDC_GRANT_TYPE_AUTHORIZATION_CODE", "OIDC_GRANT_TYPE_REFRESH_TOKEN"],
    appType: "OIDC_APP_TYPE_WEB",
    authMethodType: "OIDC_AUTH_METHOD_TYPE_BASIC",
  });
  spa = await createApp(t, "spa", {
    redirectUris: [`${rp.origin}/spa`],
    responseTypes: ["OIDC_RESPONSE_TYPE_CODE", "OIDC_RESPONSE_TYPE_ID_TOKEN", "OIDC_RESPONSE_TYPE_ID_TOKEN_TOKEN"],
    grantTypes: ["OIDC_GRANT_TYPE_AUTHORIZATION_CODE", "OIDC_GRANT_TYPE_IMPLICIT"],
    appType: "OIDC_APP_TYPE_USER_AGENT",
    authMethodType: "OIDC_AUTH_METHOD_TYPE_NONE",
  });
});
afterAll(async () => {
  await browser?.close();
  await rp?.close();
  await t?.close();
});

/** The code flow with PKCE, as openid-client builds it, through the login UI in Chromium. */
async function codeFlow(page: Awaited<ReturnType<typeof newPage>>["page"], extra: Record<string, string> = {}, signIn = true) {
  const config = await rpConfig(t.url, web.clientId, web.clientSecret, client.ClientSecretBasic(web.clientSecret));
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: `${rp.origin}/cb`,
    scope: "openid profile email offline_access",
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state,
    nonce,
    ...extra,
  });
  await page.goto(url.href);
  if (signIn) await signInOnPage(page, "alice", PASSWORD);
  return { config, verifier, state, nonce, landed: new URL(page.url()) };
}

describe("authorization code flow with PKCE through the login UI", () => {
  it("signs in, redeems the code once, verifies the ID token, reads userinfo, and rotates refresh tokens", async () => {
    const { page, ctx } = await newPage(browser);
    const { config, verifier, state, nonce, landed } = await codeFlow(page);
    expect(landed.pathname).toBe("/cb");
    expect(landed.searchParams.get("iss")).toBe(t.url);
    expect(landed.searchParams.get("code")!.length).toBeGreaterThanOrEqual(43);
    const tokens = await client.authorizationCodeGrant(config, landed, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ sub: userId, iss: t.url, aud: expect.arrayContaining([web.clientId]), nonce });
    expect(claims.auth_time).toBeTypeOf("number");
    // the ID token carries no scope claims: the client gets an access token and asks userinfo
    expect(claims.email).toBeUndefined();
    await jwtVerify(tokens.id_token!, createRemoteJWKSet(new URL(`${t.url}/oauth/v2/keys`)), { issuer: t.url, audience: web.clientId });
    expect(decodeProtectedHeader(tokens.id_token!).alg).toBe("RS256");
    expect(claims.at_hash).toBe(halfSha256(tokens.access_token));
    const info = await client.fetchUserInfo(config, tokens.access_token, userId);
    expect(info).toMatchObject({
      sub: userId,
      email: "alice@example.com",
      email_verified: true,
      given_name: "Alice",
      family_name: "Liddell",
      preferred_username: "alice",
    });

    // the code works once; its second use fails and revokes what the first gave
    const again = await client
      .authorizationCodeGrant(config, landed, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce })
      .catch((e) => e);
    expect(again.error).toBe("invalid_grant");
    expect((await client.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
    expect((await client.refreshTokenGrant(config, tokens.refresh_token!).catch((e) => e)).error).toBe("invalid_grant");
    await ctx.close();
  });

  it("refresh rotation: every use gives a new token, the old one stops working, its reuse revokes the grant; scope only narrows", async () => {
    const { page, ctx } = await newPage(browser);
    const { config, verifier, state, nonce, landed } = await codeFlow(page);
    const tokens = await client.authorizationCodeGrant(config, landed, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce });
    const first = tokens.refresh_token!;
    const second = await client.refreshTokenGrant(config, first);
    expect(second.refresh_token).toBeTruthy();
    expect(second.refresh_token).not.toBe(first);
    const narrowed = await client.refreshTokenGrant(config, second.refresh_token!, { scope: "openid" });
    expect(narrowed.scope).toBe("openid");
    expect((await client.refreshTokenGrant(config, narrowed.refresh_token!, { scope: "openid phone" }).catch((e) => e)).error).toBe("invalid_scope");
    // reuse of the first token: refused, and the current one is revoked with its access token
    expect((await client.refreshTokenGrant(config, first).catch((e) => e)).error).toBe("invalid_grant");
    expect((await client.refreshTokenGrant(config, narrowed.refresh_token!).catch((e) => e)).error).toBe("invalid_grant");
    expect((await client.tokenIntrospection(config, narrowed.access_token)).active).toBe(false);
    await ctx.close();
  });

  it("prompt none: a code at once with a session, login_required without one; max_age=0 asks to sign in again", async () => {
    const { page, ctx } = await newPage(browser);
    await codeFlow(page);
    const silent = await codeFlow(page, { prompt: "none" }, false);
    expect(silent.landed.searchParams.get("code")).toBeTruthy();
    const fresh = await newPage(browser);
    const none = await codeFlow(fresh.page, { prompt: "none" }, false);
    expect(none.landed.searchParams.get("error")).toBe("login_required");
    expect(none.landed.searchParams.get("state")).toBe(none.state);
    await fresh.ctx.close();
    const aged = await codeFlow(page, { max_age: "0" }, false);
    expect(aged.landed.pathname).toBe("/ui/login");
    await ctx.close();
  });

  it("form_post answers with a self-submitting form to the redirect URI", async () => {
    const { page, ctx } = await newPage(browser, true);
    const before = rp.received.length;
    await codeFlow(page, { response_mode: "form_post" });
    await page.waitForURL(`${rp.origin}/cb`);
    const posted = rp.received.slice(before).find((r) => r.method === "POST");
    const form = new URLSearchParams(posted!.body);
    expect(form.get("code")).toBeTruthy();
    expect(form.get("iss")).toBe(t.url);
    await ctx.close();
  });

  it("implicit id_token and id_token token come in the fragment with the nonce", async () => {
    const { page, ctx } = await newPage(browser);
    const authorize = (responseType: string) =>
      `${t.url}/oauth/v2/authorize?${new URLSearchParams({ client_id: spa.clientId, redirect_uri: `${rp.origin}/spa`, response_type: responseType, scope: "openid email", nonce: "n-123", state: "s-1" })}`;
    await page.goto(authorize("id_token"));
    await signInOnPage(page, "alice", PASSWORD);
    const hash = new URLSearchParams(new URL(page.url()).hash.slice(1));
    const idToken = decodeJwt(hash.get("id_token")!);
    expect(idToken).toMatchObject({ nonce: "n-123", sub: userId, email: "alice@example.com" });
    expect(hash.get("access_token")).toBeNull();
    expect(idToken.at_hash).toBeUndefined();
    expect(hash.get("state")).toBe("s-1");
    await page.goto(authorize("id_token token"));
    const both = new URLSearchParams(new URL(page.url()).hash.slice(1));
    expect(both.get("access_token")).toBeTruthy();
    expect(both.get("token_type")).toBe("Bearer");
    const accessToken = both.get("access_token")!;
    const withToken = await jwtVerify(both.get("id_token")!, createRemoteJWKSet(new URL(`${t.url}/oauth/v2/keys`)), { issuer: t.url, audience: spa.clientId });
    expect(withToken.protectedHeader.alg).toBe("RS256");
    expect(withToken.payload).toMatchObject({ nonce: "n-123", sub: userId });
    expect(withToken.payload.at_hash).toBe(halfSha256(accessToken));
    // no code in an implicit response, so no c_hash
    expect(both.get("code")).toBeNull();
    expect(withToken.payload.c_hash).toBeUndefined();
    // no nonce: refused, back to the client
    await page.goto(authorize("id_token").replace("&nonce=n-123", ""));
    expect(new URLSearchParams(new URL(page.url()).hash.slice(1)).get("error")).toBe("invalid_request");
    await ctx.close();
  });

  it("end session: back to the registered URI with state; the session's access tokens stop working (offline refresh tokens do not)", async () => {
    const { page, ctx } = await newPage(browser);
    const { config, verifier, state, nonce, landed } = await codeFlow(page);
    const tokens = await client.authorizationCodeGrant(config, landed, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce });
    expect((await client.tokenIntrospection(config, tokens.access_token)).active).toBe(true);
    const logout = client.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: `${rp.origin}/bye`, state: "bye-state" });
    await page.goto(logout.href);
    const back = new URL(page.url());
    expect(back.pathname).toBe("/bye");
    expect(back.searchParams.get("state")).toBe("bye-state");
    expect((await client.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
    // the refresh token was issued with offline_access: it outlives the session (OIDC Core §11, test/oidc/relying-party.test.ts)
    expect((await client.refreshTokenGrant(config, tokens.refresh_token!)).access_token).toBeTruthy();
    const unregistered = await rest(
      t.url,
      "GET",
      `/oidc/v1/end_session?${new URLSearchParams({ id_token_hint: tokens.id_token!, post_logout_redirect_uri: "https://evil.example/" })}`,
    );
    expect(unregistered.status).toBe(400);
    expect(unregistered.headers.location).toBeUndefined();
    await ctx.close();
  });
});
