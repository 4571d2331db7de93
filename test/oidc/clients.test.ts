import { randomUUID } from "node:crypto";
import { createRemoteJWKSet, importPKCS8, jwtVerify, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { addHuman, codeOverHttp, createApp } from "./rp.js";

// Client kinds and the remaining error rows of the specification's tables.
let t: TestServer;
let keyApp: Awaited<ReturnType<typeof createApp>>;
let keyFile: { keyId: string; key: string; clientId: string };
let jwtApp: Awaited<ReturnType<typeof createApp>>;
const PASSWORD = "Secr3t!pass";
const CB = "https://rp.example.com/cb";

beforeAll(async () => {
  t = await startTestServer();
  await addHuman(t, "carol", PASSWORD);
  keyApp = await createApp(t, "keyed", { redirectUris: [CB], appType: "OIDC_APP_TYPE_WEB", authMethodType: "OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT" });
  const key = await rest(t.url, "POST", `/resources/v3alpha/applications/${keyApp.appId}/keys`, { token: t.adminPat, body: {} });
  keyFile = JSON.parse(key.body.keyContent);
  jwtApp = await createApp(t, "jwt-tokens", {
    redirectUris: [CB],
    appType: "OIDC_APP_TYPE_WEB",
    authMethodType: "OIDC_AUTH_METHOD_TYPE_POST",
    accessTokenType: "OIDC_TOKEN_TYPE_JWT",
  });
});
afterAll(() => t?.close());

const form = (path: string, body: Record<string, string>, headers: Record<string, string> = {}) =>
  rest(t.url, "POST", path, { body: new URLSearchParams(body).toString(), headers: { "content-type": "application/x-www-form-urlencoded", ...headers } });
const authorizeParams = (clientId: string, extra: Record<string, string> = {}) => ({
  client_id: clientId,
  redirect_uri: CB,
  response_type: "code",
  scope: "openid",
  ...extra,
});

async function clientAssertion(aud: string, jti: string = randomUUID()) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: keyFile.clientId, sub: keyFile.clientId, aud, jti, iat: now, exp: now + 120 })
    .setProtectedHeader({ alg: "RS256", kid: keyFile.keyId })
    .sign(await importPKCS8(keyFile.key, "RS256"));
}
const assertionParams = async (aud = t.url, jti?: string) => ({
  client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
  client_assertion: await clientAssertion(aud, jti),
});

describe("private_key_jwt clients", () => {
  it("redeem codes and introspect with a client assertion signed by their key file; a replayed assertion fails", async () => {
    const { code } = await codeOverHttp(t, authorizeParams(keyApp.clientId), "carol", PASSWORD);
    const assertion = await assertionParams();
    const tokens = await form("/oauth/v2/token", { grant_type: "authorization_code", code, redirect_uri: CB, ...assertion });
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    const introspected = await form("/oauth/v2/introspect", { token: tokens.body.access_token, ...(await assertionParams()) });
    expect(introspected.body).toMatchObject({ active: true, client_id: keyApp.clientId });
    const replay = await form("/oauth/v2/introspect", { token: tokens.body.access_token, ...assertion });
    expect(replay.status).toBe(401);
    expect(replay.body.error).toBe("invalid_client");
    // the audience must be this issuer (or the endpoint), not another server
    const foreign = await form("/oauth/v2/introspect", { token: tokens.body.access_token, ...(await assertionParams("https://other.example")) });
    expect(foreign.body.error).toBe("invalid_client");
    // a client registered for private_key_jwt cannot use a secret instead
    expect(
      (
        await form(
          "/oauth/v2/introspect",
          { token: tokens.body.access_token },
          { authorization: `Basic ${Buffer.from(`${keyApp.clientId}:x`).toString("base64")}` },
        )
      ).body.error,
    ).toBe("invalid_client");
  });
});

describe("JWT access tokens for an application", () => {
  it("are JWTs signed with a published key (client_secret_post)", async () => {
    const { code } = await codeOverHttp(t, authorizeParams(jwtApp.clientId), "carol", PASSWORD);
    const tokens = await form("/oauth/v2/token", {
      grant_type: "authorization_code",
      code,
      redirect_uri: CB,
      client_id: jwtApp.clientId,
      client_secret: jwtApp.clientSecret,
    });
    expect(tokens.status).toBe(200);
    const { payload, protectedHeader } = await jwtVerify(tokens.body.access_token, createRemoteJWKSet(new URL(`${t.url}/oauth/v2/keys`)), {
      issuer: t.url,
      audience: jwtApp.clientId,
    });
    expect(protectedHeader.typ).toBe("at+jwt");
    expect(payload.client_id).toBe(jwtApp.clientId);
    // the client has no refresh_token grant: unauthorized_client
    const refresh = await form("/oauth/v2/token", {
      grant_type: "refresh_token",
      refresh_token: "x",
      client_id: jwtApp.clientId,
      client_secret: jwtApp.clientSecret,
    });
    expect(refresh.body.error).toBe("unauthorized_client");
  });
});

describe("remaining authorization rows", () => {
  it("invalid response_mode values are ignored (the default applies); prompt none with two sessions is interaction_required", async () => {
    const first = await codeOverHttp(t, authorizeParams(jwtApp.clientId, { response_mode: "bogus", state: "s" }), "carol", PASSWORD);
    const landed = new URL(first.location);
    expect(landed.searchParams.get("code")).toBeTruthy();
    expect(landed.hash).toBe("");

    // a browser signed in with two accounts, asked for prompt=none: the user would have to choose
    await addHuman(t, "dave", PASSWORD);
    const page = await rest(t.url, "GET", "/ui/login");
    const csrfCookie = String(page.headers["set-cookie"]).split(";")[0]!;
    const csrf = (page.body as string).match(/name="csrf" value="([^"]+)"/)![1]!;
    let agent = "";
    for (const loginName of ["carol", "dave"]) {
      const r = await rest(t.url, "POST", "/ui/login/password", {
        body: new URLSearchParams({ loginName, password: PASSWORD, csrf }).toString(),
        headers: { "content-type": "application/x-www-form-urlencoded", cookie: [csrfCookie, agent].filter(Boolean).join("; ") },
      });
      expect(r.status).toBe(200);
      agent ||= String(r.headers["set-cookie"]).split(";")[0]!;
    }
    const none = await rest(t.url, "GET", `/oauth/v2/authorize?${new URLSearchParams(authorizeParams(jwtApp.clientId, { prompt: "none", state: "two" }))}`, {
      headers: { cookie: agent },
    });
    expect(new URL(none.headers.location!).searchParams.get("error")).toBe("interaction_required");
    // with an id_token_hint naming one of them, prompt none succeeds silently
    const { code } = await codeOverHttp(t, authorizeParams(jwtApp.clientId, { scope: "openid" }), "dave", PASSWORD);
    const tokens = await form("/oauth/v2/token", {
      grant_type: "authorization_code",
      code,
      redirect_uri: CB,
      client_id: jwtApp.clientId,
      client_secret: jwtApp.clientSecret,
    });
    const hinted = await rest(
      t.url,
      "GET",
      `/oauth/v2/authorize?${new URLSearchParams(authorizeParams(jwtApp.clientId, { prompt: "none", id_token_hint: tokens.body.id_token }))}`,
      { headers: { cookie: agent } },
    );
    expect(new URL(hinted.headers.location!).searchParams.get("code")).toBeTruthy();
  });

  it("end session without id_token_hint asks the user in the login UI, then goes back to the registered URI", async () => {
    const app = await createApp(t, "logout-app", {
      redirectUris: [CB],
      postLogoutRedirectUris: ["https://rp.example.com/bye"],
      appType: "OIDC_APP_TYPE_WEB",
      authMethodType: "OIDC_AUTH_METHOD_TYPE_BASIC",
    });
    const start = await rest(
      t.url,
      "GET",
      `/oidc/v1/end_session?${new URLSearchParams({ client_id: app.clientId, post_logout_redirect_uri: "https://rp.example.com/bye", state: "st" })}`,
    );
    expect(start.status).toBe(303);
    expect(start.headers.location).toMatch(/^\/ui\/login\/logout\?/);
    const confirm = await rest(t.url, "GET", start.headers.location!);
    const csrf = (confirm.body as string).match(/name="csrf" value="([^"]+)"/)![1]!;
    const returnTo = (confirm.body as string).match(/name="return_to" value="([^"]+)"/)![1]!.replace(/&amp;/g, "&");
    const done = await rest(t.url, "POST", "/ui/login/logout", {
      body: new URLSearchParams({ csrf, return_to: returnTo }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: String(confirm.headers["set-cookie"]).split(";")[0]! },
    });
    expect(done.status).toBe(303);
    const back = await rest(t.url, "GET", done.headers.location!);
    expect(back.headers.location).toBe("https://rp.example.com/bye?state=st");
    // an unregistered URI is refused before anything happens
    const bad = await rest(
      t.url,
      "GET",
      `/oidc/v1/end_session?${new URLSearchParams({ client_id: app.clientId, post_logout_redirect_uri: "https://evil.example" })}`,
    );
    expect(bad.status).toBe(400);
  });
});
