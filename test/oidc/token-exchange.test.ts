import { randomUUID } from "node:crypto";
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, importPKCS8, jwtVerify, SignJWT } from "jose";
import * as client from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tokenTypes as T } from "../../src/oidc/grants/token-exchange.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { TargetServer } from "../support/targets.js";
import { addHuman, codeOverHttp, createApp, rpConfig } from "./rp.js";

// Token exchange (RFC 8693) as the specification's token endpoint section says: the grant table, "Token exchange
// parameters" and the token type matrix; impersonation and delegation as the contract says ("Security settings
// and token exchange"). Every exchange goes through openid-client's generic grant request, as a relying party would.

const TE = "urn:ietf:params:oauth:grant-type:token-exchange";
const PASSWORD = "Secr3t!pass";
const API_SCOPE = "urn:svc:iam:org:project:id:svc:aud";

let t: TestServer;
let aliceId: string;
let samId: string;
let olgaId: string;
let otherOrg: string;
/** Code flow + token exchange + refresh, client_secret_basic (and post, with the same secret). */
let web: Awaited<ReturnType<typeof createApp>>;
let webConfig: client.Configuration;
/** A public client (PKCE, `none`) with the token exchange grant type: refused at the token endpoint all the same. */
let spa: Awaited<ReturnType<typeof createApp>>;
/** Another confidential client of the code flow and token exchange, without the refresh_token grant. */
let other: Awaited<ReturnType<typeof createApp>>;
let otherConfig: client.Configuration;
/** Token exchange alone, private_key_jwt (signs JWT subject tokens with its key), JWT access tokens. */
let keyed: Awaited<ReturnType<typeof createApp>>;
let keyFile: { keyId: string; key: string; clientId: string };
/** A client without the token exchange grant. */
let plain: Awaited<ReturnType<typeof createApp>>;
/** alice's tokens from the code flow of `web`. */
let alice: client.TokenEndpointResponse;
let sam: client.TokenEndpointResponse;
type Machine = { id: string; username: string; secret: string };
let endUserImp: Machine;
let adminImp: Machine;
let orgImp: Machine;
let noRole: Machine;
let jwtImp: Machine;

const exchange = (config: client.Configuration, params: Record<string, string> | URLSearchParams) => client.genericGrantRequest(config, TE, params);
/** The OAuth error of a failed exchange: `error`, `error_description` and the HTTP status; a 5xx fails the test. */
async function failure(p: Promise<unknown>) {
  type Challenge = { parameters: { error?: string; error_description?: string } };
  const e = await p.then(
    () => undefined,
    (err: { error?: string; error_description?: string; status?: number; cause?: Challenge[] }) => err,
  );
  if (!e) throw new Error("the exchange succeeded");
  expect(e.status ?? 400, JSON.stringify(e)).toBeLessThan(500);
  // A 401 comes as a WWW-Authenticate challenge (RFC 6749 §5.2), which oauth4webapi reports as its cause.
  const challenge = Array.isArray(e.cause) ? e.cause[0]?.parameters : undefined;
  return { error: e.error ?? challenge?.error, description: e.error_description ?? challenge?.error_description ?? "", status: e.status };
}
const api = async (method: string, path: string, body?: unknown) => {
  const r = await rest(t.url, method, path, { token: t.adminPat, ...(body === undefined ? {} : { body }) });
  expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBeLessThan(300);
  return r.body;
};
const setFlag = (on: boolean) => api("PUT", "/v2/features/instance", { oidcTokenExchange: on });
const setImpersonation = (on: boolean | "reset", ctx = "") =>
  api("PATCH", `/settings/v3alpha/security${ctx}`, { enableImpersonation: on === "reset" ? { reset: true } : { set: on } });

async function machine(username: string, roles: string[], context: object, accessTokenType = "ACCESS_TOKEN_TYPE_OPAQUE"): Promise<Machine> {
  const m = await api("POST", "/resources/v3alpha/users", { username, machine: { name: username, accessTokenType } });
  const secret = await api("POST", `/resources/v3alpha/users/${m.details.id}/_generate_secret`, {});
  if (roles.length) await api("POST", "/resources/v3alpha/memberships", { userId: m.details.id, context, roles });
  return { id: m.details.id, username, secret: secret.clientSecret };
}
/** A machine's access token (client credentials) meant for the project of `app`. */
async function machineToken(m: Machine, app: { projectId: string }, extra = "") {
  const config = await rpConfig(t.url, m.username, m.secret);
  return (await client.clientCredentialsGrant(config, { scope: `urn:svc:iam:org:project:id:${app.projectId}:aud${extra}` })).access_token;
}
/** A user's tokens through the code flow of `web` (sign-in over HTTP). */
async function signIn(username: string, scope: string) {
  const { location } = await codeOverHttp(
    t,
    { client_id: web.clientId, redirect_uri: "https://rp.example.com/cb", response_type: "code", scope },
    username,
    PASSWORD,
  );
  return client.authorizationCodeGrant(webConfig, new URL(location));
}
/** A JWT signed with `keyed`'s own key about `sub`; `claims` override the valid defaults. */
async function clientJwt(sub: string, claims: Record<string, unknown> = {}) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: keyFile.clientId, sub, aud: t.url, jti: randomUUID(), iat: now, exp: now + 300, ...claims })
    .setProtectedHeader({ alg: "RS256", kid: keyFile.keyId })
    .sign(await importPKCS8(keyFile.key, "RS256"));
}
const keyedConfig = async () =>
  rpConfig(t.url, keyed.clientId, undefined, client.PrivateKeyJwt({ key: await importPKCS8(keyFile.key, "RS256"), kid: keyFile.keyId }));
const introspect = (token: string) => client.tokenIntrospection(webConfig, token);
const jwks = () => createRemoteJWKSet(new URL(`${t.url}/oauth/v2/keys`));

beforeAll(async () => {
  t = await startTestServer();
  aliceId = await addHuman(t, "alice", PASSWORD);
  samId = await addHuman(t, "sam", PASSWORD);
  otherOrg = await t.org("Other");
  const olga = await rest(t.url, "POST", `/resources/v3alpha/users?ctx.org_id=${otherOrg}`, {
    token: t.adminPat,
    body: {
      username: "olga",
      human: { profile: { givenName: "Olga", familyName: "O" }, email: { address: "olga@example.com" }, password: { password: PASSWORD } },
    },
  });
  olgaId = olga.body.details.id;
  web = await createApp(t, "web", {
    redirectUris: ["https://rp.example.com/cb"],
    grantTypes: ["OIDC_GRANT_TYPE_AUTHORIZATION_CODE", "OIDC_GRANT_TYPE_REFRESH_TOKEN", "OIDC_GRANT_TYPE_TOKEN_EXCHANGE"],
    appType: "OIDC_APP_TYPE_WEB",
    authMethodType: "OIDC_AUTH_METHOD_TYPE_BASIC",
  });
  webConfig = await rpConfig(t.url, web.clientId, web.clientSecret, client.ClientSecretBasic(web.clientSecret));
  spa = await createApp(t, "spa", {
    redirectUris: ["https://rp.example.com/spa"],
    grantTypes: ["OIDC_GRANT_TYPE_AUTHORIZATION_CODE", "OIDC_GRANT_TYPE_TOKEN_EXCHANGE"],
    appType: "OIDC_APP_TYPE_USER_AGENT",
    authMethodType: "OIDC_AUTH_METHOD_TYPE_NONE",
  });
  other = await createApp(t, "other", {
    redirectUris: ["https://rp.example.com/other"],
    grantTypes: ["OIDC_GRANT_TYPE_AUTHORIZATION_CODE", "OIDC_GRANT_TYPE_TOKEN_EXCHANGE"],
    appType: "OIDC_APP_TYPE_WEB",
    authMethodType: "OIDC_AUTH_METHOD_TYPE_BASIC",
  });
  otherConfig = await rpConfig(t.url, other.clientId, other.clientSecret, client.ClientSecretBasic(other.clientSecret));
  keyed = await createApp(t, "keyed", {
    grantTypes: ["OIDC_GRANT_TYPE_TOKEN_EXCHANGE"],
    appType: "OIDC_APP_TYPE_WEB",
    authMethodType: "OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT",
    accessTokenType: "OIDC_TOKEN_TYPE_JWT",
  });
  keyFile = JSON.parse((await api("POST", `/resources/v3alpha/applications/${keyed.appId}/keys`, {})).keyContent);
  plain = await createApp(t, "plain", {
    redirectUris: ["https://rp.example.com/cb"],
    grantTypes: ["OIDC_GRANT_TYPE_AUTHORIZATION_CODE"],
    appType: "OIDC_APP_TYPE_WEB",
    authMethodType: "OIDC_AUTH_METHOD_TYPE_BASIC",
  });
  endUserImp = await machine("end-user-imp", ["IAM_END_USER_IMPERSONATOR"], { instance: true });
  adminImp = await machine("admin-imp", ["IAM_ADMIN_IMPERSONATOR"], { instance: true });
  orgImp = await machine("org-imp", ["ORG_END_USER_IMPERSONATOR"], { organizationId: otherOrg });
  noRole = await machine("no-role", [], {});
  jwtImp = await machine("jwt-imp", ["IAM_END_USER_IMPERSONATOR"], { instance: true }, "ACCESS_TOKEN_TYPE_JWT");
  // sam is support staff: an end-user impersonator, and so (holding a membership) an administrator himself.
  await api("POST", "/resources/v3alpha/memberships", { userId: samId, context: { instance: true }, roles: ["IAM_END_USER_IMPERSONATOR"] });
  alice = await signIn("alice", `openid profile email offline_access ${API_SCOPE}`);
  sam = await signIn("sam", "openid profile");
});
afterAll(() => t?.close());

describe("the feature flag oidc_token_exchange (contract: off, the grant is unsupported_grant_type)", () => {
  it("off: unsupported_grant_type and not in discovery; on: advertised and working; off again: unsupported", async () => {
    const grants = async () => (await rest(t.url, "GET", "/.well-known/openid-configuration")).body.grant_types_supported as string[];
    const subject = { subject_token: alice.access_token, subject_token_type: T.accessToken };
    // the first instance starts with the flag off
    expect(await grants()).not.toContain(TE);
    expect((await failure(exchange(webConfig, subject))).error).toBe("unsupported_grant_type");
    await setFlag(true);
    expect(await grants()).toContain(TE);
    const issued = await exchange(webConfig, subject);
    expect(issued.issued_token_type).toBe(T.accessToken);
    await setFlag(false);
    expect((await failure(exchange(webConfig, subject))).error).toBe("unsupported_grant_type");
    expect(await grants()).not.toContain(TE);
    await setFlag(true);
  });
});

describe("the client (basic, post, private_key_jwt; never none: RFC 8693 §2.1; the client's grant types)", () => {
  it("a client without the token exchange grant type is unauthorized_client; an unauthenticated one invalid_client", async () => {
    const config = await rpConfig(t.url, plain.clientId, plain.clientSecret, client.ClientSecretBasic(plain.clientSecret));
    const f = await failure(exchange(config, { subject_token: alice.access_token, subject_token_type: T.accessToken }));
    expect(f.error).toBe("unauthorized_client");
    const wrong = await rpConfig(t.url, web.clientId, "wrong", client.ClientSecretBasic("wrong"));
    expect((await failure(exchange(wrong, { subject_token: alice.access_token, subject_token_type: T.accessToken }))).error).toBe("invalid_client");
  });

  it("client_secret_basic and client_secret_post exchange the user's token", async () => {
    const post = await rpConfig(t.url, web.clientId, web.clientSecret, client.ClientSecretPost(web.clientSecret));
    for (const config of [webConfig, post]) {
      const r = await exchange(config, { subject_token: alice.access_token, subject_token_type: T.accessToken, scope: "openid" });
      expect(decodeJwt(r.id_token!).sub).toBe(aliceId);
    }
  });

  it("project_role_check: a user without a grant of the client's project gets no token, as at sign-in", async () => {
    const project = `/resources/v3alpha/projects/${web.projectId}`;
    await api("PATCH", project, { projectRoleCheck: true });
    try {
      const refused = await failure(exchange(webConfig, { subject_token: alice.access_token, subject_token_type: T.accessToken }));
      expect(refused).toMatchObject({ error: "invalid_grant", description: "the user has no grant of the client's project, which checks roles" });
    } finally {
      await api("PATCH", project, { projectRoleCheck: false });
    }
    expect((await exchange(webConfig, { subject_token: alice.access_token, subject_token_type: T.accessToken })).access_token).toBeTruthy();
  });

  it("none (a public client) is invalid_client even with the grant type; private_key_jwt (a client of token exchange alone) acts for a user", async () => {
    await setImpersonation(true);
    const spaConfig = await rpConfig(t.url, spa.clientId, undefined, client.None());
    const publicClient = await failure(
      exchange(spaConfig, {
        subject_token: aliceId,
        subject_token_type: T.userId,
        actor_token: await machineToken(endUserImp, spa),
        actor_token_type: T.accessToken,
        requested_token_type: T.jwt,
      }),
    );
    expect(publicClient).toMatchObject({ error: "invalid_client", description: "client authentication none is not accepted here" });
    const k = await exchange(await keyedConfig(), {
      subject_token: aliceId,
      subject_token_type: T.userId,
      actor_token: await machineToken(endUserImp, keyed),
      actor_token_type: T.accessToken,
      requested_token_type: T.jwt,
    });
    expect(decodeJwt(k.access_token)).toMatchObject({ sub: aliceId, client_id: keyed.clientId });
  });
});

describe("token type matrix: subject_token", () => {
  it("access token, opaque: a new opaque access token for the same user with the subject's scope", async () => {
    const r = await exchange(webConfig, { subject_token: alice.access_token, subject_token_type: T.accessToken });
    expect(r).toMatchObject({ issued_token_type: T.accessToken, token_type: "bearer", scope: alice.scope });
    expect(r.access_token).not.toBe(alice.access_token);
    expect(() => decodeJwt(r.access_token)).toThrow(); // opaque
    expect(await introspect(r.access_token)).toMatchObject({ active: true, sub: aliceId, client_id: web.clientId, scope: alice.scope });
  });

  it("access token, JWT: accepted as a subject like an opaque one", async () => {
    const asJwt = await exchange(webConfig, { subject_token: alice.access_token, subject_token_type: T.accessToken, requested_token_type: T.jwt });
    expect(decodeProtectedHeader(asJwt.access_token).typ).toBe("at+jwt");
    const r = await exchange(webConfig, { subject_token: asJwt.access_token, subject_token_type: T.accessToken, scope: "openid email" });
    expect(r.scope).toBe("openid email");
    expect(await client.fetchUserInfo(webConfig, r.access_token, aliceId)).toMatchObject({ sub: aliceId, email: "alice@example.com" });
  });

  it("ID token: accepted (it stands for openid and the user's claims), and an access token for it works at userinfo", async () => {
    const r = await exchange(webConfig, { subject_token: alice.id_token!, subject_token_type: T.idToken, scope: "openid profile" });
    expect(r.scope).toBe("openid profile");
    expect(await client.fetchUserInfo(webConfig, r.access_token, aliceId)).toMatchObject({ sub: aliceId, given_name: "Alice" });
    // an ID token carries no audience scope: it cannot become an API credential
    expect((await failure(exchange(webConfig, { subject_token: alice.id_token!, subject_token_type: T.idToken, scope: API_SCOPE }))).error).toBe(
      "invalid_scope",
    );
    // a JWT access token is no ID token
    const asJwt = await exchange(webConfig, { subject_token: alice.access_token, subject_token_type: T.accessToken, requested_token_type: T.jwt });
    expect((await failure(exchange(webConfig, { subject_token: asJwt.access_token, subject_token_type: T.idToken }))).error).toBe("invalid_request");
  });

  it("JWT signed by the client's own key: only with an actor_token; signed by another key, or replayed, refused", async () => {
    const config = await keyedConfig();
    const actor = await machineToken(endUserImp, keyed);
    const alone = await failure(exchange(config, { subject_token: await clientJwt(aliceId), subject_token_type: T.jwt }));
    expect(alone).toMatchObject({ error: "invalid_request" });
    expect(alone.description).toMatch(/needs an actor_token/);
    const jwt = await clientJwt(aliceId);
    const r = await exchange(config, { subject_token: jwt, subject_token_type: T.jwt, actor_token: actor, actor_token_type: T.accessToken, scope: "openid" });
    expect(decodeJwt(r.id_token!)).toMatchObject({ sub: aliceId, azp: keyed.clientId, act: { sub: endUserImp.id } });
    expect(decodeJwt(r.id_token!).aud).toContain(keyed.clientId);
    const replay = await failure(exchange(config, { subject_token: jwt, subject_token_type: T.jwt, actor_token: actor, actor_token_type: T.accessToken }));
    expect(replay.description).toMatch(/subject_token has no jti or was already used/);
    // a JWT "signed by the client" with an unknown key, or issued by someone else
    const forged = await new SignJWT({
      iss: keyFile.clientId,
      sub: aliceId,
      aud: t.url,
      jti: randomUUID(),
      iat: Math.floor(Date.now() / 1000),
      exp: Math.floor(Date.now() / 1000) + 60,
    })
      .setProtectedHeader({ alg: "HS256", kid: keyFile.keyId })
      .sign(new TextEncoder().encode("x".repeat(32)));
    for (const bad of [forged, await clientJwt(aliceId, { iss: "someone-else" }), await clientJwt(aliceId, { exp: Math.floor(Date.now() / 1000) - 60 })]) {
      const f = await failure(exchange(config, { subject_token: bad, subject_token_type: T.jwt, actor_token: actor, actor_token_type: T.accessToken }));
      expect(f.error).toBe("invalid_request");
      expect(f.description).toMatch(/^subject_token\b/);
    }
  });

  it("user ID (urn:svc:params:oauth:token-type:user_id): only with an actor_token", async () => {
    const alone = await failure(exchange(webConfig, { subject_token: aliceId, subject_token_type: T.userId }));
    expect(alone.error).toBe("invalid_request");
    expect(alone.description).toMatch(/needs an actor_token/);
    const r = await exchange(webConfig, {
      subject_token: aliceId,
      subject_token_type: T.userId,
      actor_token: await machineToken(endUserImp, web),
      actor_token_type: T.accessToken,
    });
    expect(await introspect(r.access_token)).toMatchObject({ active: true, sub: aliceId, act: { sub: endUserImp.id, iss: t.url } });
  });

  it("refresh token: refused as a subject (invalid_request), and unknown types too", async () => {
    const refresh = await failure(exchange(webConfig, { subject_token: alice.refresh_token!, subject_token_type: T.refreshToken }));
    expect(refresh.error).toBe("invalid_request");
    expect(refresh.description).toMatch(/refresh tokens cannot be exchanged/);
    for (const type of ["urn:ietf:params:oauth:token-type:saml2", "bogus", "constructor"]) {
      expect((await failure(exchange(webConfig, { subject_token: alice.access_token, subject_token_type: type }))).error).toBe("invalid_request");
    }
    // required parameters
    expect((await failure(exchange(webConfig, { subject_token_type: T.accessToken }))).description).toMatch(/subject_token is missing/);
    expect((await failure(exchange(webConfig, { subject_token: alice.access_token }))).description).toMatch(/subject_token_type is missing/);
  });
});

describe("token type matrix: actor_token", () => {
  const subject = () => ({ subject_token: aliceId, subject_token_type: T.userId });

  it("access token, opaque and JWT, and ID token: accepted", async () => {
    const opaque = await exchange(webConfig, {
      ...subject(),
      actor_token: await machineToken(endUserImp, web),
      actor_token_type: T.accessToken,
      requested_token_type: T.jwt,
    });
    expect(decodeJwt(opaque.access_token).act).toEqual({ iss: t.url, sub: endUserImp.id });
    const jwtActor = await machineToken(jwtImp, web);
    expect(decodeProtectedHeader(jwtActor).typ).toBe("at+jwt");
    const viaJwt = await exchange(webConfig, { ...subject(), actor_token: jwtActor, actor_token_type: T.accessToken, requested_token_type: T.jwt });
    expect(decodeJwt(viaJwt.access_token).act).toEqual({ iss: t.url, sub: jwtImp.id });
    // sam's ID token (of `web`): he signed in, so the tokens carry his authentication time
    const viaId = await exchange(webConfig, {
      ...subject(),
      actor_token: sam.id_token!,
      actor_token_type: T.idToken,
      scope: "openid",
      requested_token_type: T.jwt,
    });
    const at = decodeJwt(viaId.access_token);
    expect(at).toMatchObject({ sub: aliceId, act: { iss: t.url, sub: samId }, auth_time: decodeJwt(sam.id_token!).auth_time });
  });

  it("refresh token, JWT and user ID: not allowed as actor tokens; actor_token_type is required with actor_token and only with it", async () => {
    const cases: [string, string][] = [
      [alice.refresh_token!, T.refreshToken],
      [await clientJwt(samId), T.jwt],
      [samId, T.userId],
    ];
    for (const [token, type] of cases) {
      const f = await failure(exchange(webConfig, { ...subject(), actor_token: token, actor_token_type: type }));
      expect(f.error, type).toBe("invalid_request");
      expect(f.description).toMatch(/actor_token_type .* is not supported as an actor token/);
    }
    expect((await failure(exchange(webConfig, { ...subject(), actor_token: sam.access_token }))).description).toMatch(/actor_token_type is missing/);
    const typeOnly = { subject_token: alice.access_token, subject_token_type: T.accessToken, actor_token_type: T.accessToken };
    expect((await failure(exchange(webConfig, typeOnly))).description).toMatch(/actor_token_type was sent without actor_token/);
  });
});

describe("token type matrix: requested_token_type", () => {
  const subject = () => ({ subject_token: alice.access_token, subject_token_type: T.accessToken });

  it("access token (the default): opaque only, even for a client whose access tokens are JWTs", async () => {
    const r = await exchange(webConfig, { ...subject(), requested_token_type: T.accessToken });
    expect(r).toMatchObject({ issued_token_type: T.accessToken, token_type: "bearer" });
    expect(() => decodeJwt(r.access_token)).toThrow();
    expect(r.expires_in).toBeGreaterThan(0);
    const byKeyed = await exchange(await keyedConfig(), {
      subject_token: aliceId,
      subject_token_type: T.userId,
      actor_token: await machineToken(endUserImp, keyed),
      actor_token_type: T.accessToken,
    });
    expect(byKeyed.issued_token_type).toBe(T.accessToken);
    expect(() => decodeJwt(byKeyed.access_token)).toThrow();
  });

  it("JWT: an access token as a JWT (typ at+jwt) signed with the published keys", async () => {
    const r = await exchange(webConfig, { ...subject(), requested_token_type: T.jwt });
    expect(r).toMatchObject({ issued_token_type: T.jwt, token_type: "bearer" });
    const { payload, protectedHeader } = await jwtVerify(r.access_token, jwks(), { issuer: t.url, typ: "at+jwt" });
    expect(protectedHeader.alg).toBe("RS256");
    expect(payload).toMatchObject({ sub: aliceId, client_id: web.clientId, scope: alice.scope });
  });

  it("ID token: in access_token, token_type N_A, issued_token_type id_token, and nothing else", async () => {
    const r = await exchange(webConfig, { ...subject(), requested_token_type: T.idToken, scope: "openid email" });
    expect(r).toMatchObject({ issued_token_type: T.idToken, token_type: "n_a", scope: "openid email" });
    expect(r.id_token).toBeUndefined();
    expect(r.refresh_token).toBeUndefined();
    const { payload, protectedHeader } = await jwtVerify(r.access_token, jwks(), { issuer: t.url, audience: web.clientId });
    expect(protectedHeader.typ).toBe("JWT");
    // no access token comes with it, so the scope's claims are in the ID token (as for implicit id_token)
    expect(payload).toMatchObject({ sub: aliceId, azp: web.clientId, email: "alice@example.com" });
    expect(r.expires_in).toBe(payload.exp! - payload.iat!);
    // it is no access token
    expect((await rest(t.url, "GET", "/oidc/v1/userinfo", { token: r.access_token })).status).toBe(401);
  });

  it("refresh token and user ID cannot be issued (invalid_request)", async () => {
    for (const type of [T.refreshToken, T.userId, "bogus"]) {
      const f = await failure(exchange(webConfig, { ...subject(), requested_token_type: type }));
      expect(f.error, type).toBe("invalid_request");
      expect(f.description).toMatch(/requested_token_type .* cannot be issued/);
    }
  });
});

describe("scope, audience and resource (Token exchange parameters)", () => {
  const subject = () => ({ subject_token: alice.access_token, subject_token_type: T.accessToken });

  it("scope defaults to the subject's and may only narrow (invalid_scope when widened)", async () => {
    const narrowed = await exchange(webConfig, { ...subject(), scope: "openid email" });
    expect(narrowed.scope).toBe("openid email");
    expect((await introspect(narrowed.access_token)).scope).toBe("openid email");
    const widened = await failure(exchange(webConfig, { ...subject(), scope: "openid phone" }));
    expect(widened.error).toBe("invalid_scope");
    expect(widened.description).toMatch(/phone/);
    const fromNarrow = await failure(exchange(webConfig, { subject_token: narrowed.access_token, subject_token_type: T.accessToken, scope: "openid profile" }));
    expect(fromNarrow.error).toBe("invalid_scope");
    expect((await failure(exchange(webConfig, { ...subject(), scope: "openid unknown-scope" }))).error).toBe("invalid_scope");
  });

  it("openid adds an ID token, offline_access a refresh token that refreshes", async () => {
    const withId = await exchange(webConfig, { ...subject(), scope: "openid" });
    const idToken = decodeJwt(withId.id_token!);
    expect(idToken).toMatchObject({ sub: aliceId, azp: web.clientId });
    expect(idToken.aud).toContain(web.clientId);
    expect(withId.refresh_token).toBeUndefined();
    const without = await exchange(webConfig, { ...subject(), scope: "email" });
    expect(without.id_token).toBeUndefined();
    const offline = await exchange(webConfig, { ...subject(), scope: "openid offline_access" });
    expect(offline.refresh_token).toBeTruthy();
    expect(offline.scope).toBe("openid offline_access");
    const refreshed = await client.refreshTokenGrant(webConfig, offline.refresh_token!);
    expect(refreshed.scope).toBe("openid offline_access");
    expect(await introspect(refreshed.access_token)).toMatchObject({ active: true, sub: aliceId });
    // nor for another audience than the client's own: its refreshes would change it
    const narrowed = await exchange(webConfig, { ...subject(), scope: "openid offline_access", audience: web.projectId });
    expect(narrowed.refresh_token).toBeUndefined();
    expect(narrowed.scope).toBe("openid");
    // a client without the refresh_token grant (`other`) gets none: offline_access is left out of the scope
    const { location } = await codeOverHttp(
      t,
      { client_id: other.clientId, redirect_uri: "https://rp.example.com/other", response_type: "code", scope: "openid offline_access" },
      "alice",
      PASSWORD,
    );
    const otherTokens = await client.authorizationCodeGrant(otherConfig, new URL(location));
    expect(otherTokens.scope).toBe("openid offline_access");
    const otherExchange = await exchange(otherConfig, { subject_token: otherTokens.access_token, subject_token_type: T.accessToken });
    expect(otherExchange.refresh_token).toBeUndefined();
    expect(otherExchange.scope).toBe("openid");
  });

  it("audience must be within the subject's and actor's audiences (invalid_target otherwise), and is then the token's", async () => {
    const own = await exchange(webConfig, { ...subject(), audience: web.projectId });
    expect((await introspect(own.access_token)).aud).toEqual([web.projectId]);
    // several audiences (RFC 8693 §2.1 repeats the parameter)
    const both = await exchange(webConfig, new URLSearchParams([...Object.entries(subject()), ["audience", web.clientId], ["audience", "svc"]]));
    expect((await introspect(both.access_token)).aud).toEqual([web.clientId, "svc"]);
    const foreign = await failure(exchange(webConfig, { ...subject(), audience: spa.projectId }));
    expect(foreign.error).toBe("invalid_target");
    expect(foreign.description).toContain(spa.projectId);
    // the actor's audience counts too
    const withActor = await exchange(webConfig, {
      subject_token: aliceId,
      subject_token_type: T.userId,
      actor_token: await machineToken(endUserImp, web, ` urn:svc:iam:org:project:id:${spa.projectId}:aud`),
      actor_token_type: T.accessToken,
      audience: spa.projectId,
    });
    expect(withActor.access_token).toBeTruthy();
  });

  it("resource is not supported (invalid_target)", async () => {
    const f = await failure(exchange(webConfig, { ...subject(), resource: "https://api.example.com" }));
    expect(f.error).toBe("invalid_target");
    expect(f.description).toMatch(/resource/);
  });

  it("an exchanged token is an API credential while it keeps the API scope, and no longer once narrowed without it", async () => {
    const kept = await exchange(webConfig, subject());
    expect((await rest(t.url, "GET", "/settings/v3alpha/languages", { token: kept.access_token })).status).toBe(200);
    const narrowed = await exchange(webConfig, { ...subject(), scope: "openid" });
    expect((await introspect(narrowed.access_token)).aud).not.toContain("svc");
    expect((await rest(t.url, "GET", "/settings/v3alpha/languages", { token: narrowed.access_token })).status).toBe(401);
  });
});

describe("subject and actor tokens that are garbage, expired, revoked or someone else's: invalid_request, never a 5xx", () => {
  it("garbage of every type, in both places", async () => {
    const garbage = ["x", "a.b.c", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", "' OR 1=1 --", "%00", "A".repeat(5000), "{}", "pat_nothing"];
    for (const token of garbage) {
      for (const type of [T.accessToken, T.idToken]) {
        const f = await failure(exchange(webConfig, { subject_token: token, subject_token_type: type }));
        expect([f.error, f.status], `${type} ${token.slice(0, 20)}`).toEqual(["invalid_request", 400]);
        expect(f.description).toMatch(/^subject_token /);
        const a = await failure(exchange(webConfig, { subject_token: aliceId, subject_token_type: T.userId, actor_token: token, actor_token_type: type }));
        expect([a.error, a.status]).toEqual(["invalid_request", 400]);
        expect(a.description).toMatch(/^actor_token /);
      }
      const u = await failure(
        exchange(webConfig, { subject_token: token, subject_token_type: T.userId, actor_token: sam.access_token, actor_token_type: T.accessToken }),
      );
      expect(u.error).toBe("invalid_request");
    }
  });

  it("a revoked access token, and a token issued for another client", async () => {
    const own = await exchange(webConfig, { subject_token: alice.access_token, subject_token_type: T.accessToken, scope: "openid" });
    await client.tokenRevocation(webConfig, own.access_token);
    const revoked = await failure(exchange(webConfig, { subject_token: own.access_token, subject_token_type: T.accessToken }));
    expect(revoked).toMatchObject({ error: "invalid_request", description: "subject_token is invalid, expired or revoked" });
    // alice's token of `web` cannot be exchanged by the client `other` (of another project)
    const foreign = await failure(exchange(otherConfig, { subject_token: alice.access_token, subject_token_type: T.accessToken }));
    expect(foreign).toMatchObject({ error: "invalid_request", description: "subject_token was not issued for this client" });
    const otherId = await failure(exchange(otherConfig, { subject_token: alice.id_token!, subject_token_type: T.idToken }));
    expect(otherId.description).toBe("subject_token was not issued for this client");
  });

  it("expired access and ID tokens (a server whose tokens live four seconds)", async () => {
    const short = await startTestServer({ SVC_OIDC_ACCESS_TOKEN_LIFETIME: "4", SVC_OIDC_ID_TOKEN_LIFETIME: "4" });
    try {
      await rest(short.url, "PUT", "/v2/features/instance", { token: short.adminPat, body: { oidcTokenExchange: true } });
      await addHuman(short, "eve", PASSWORD);
      const app = await createApp(short, "short", {
        redirectUris: ["https://rp.example.com/cb"],
        grantTypes: ["OIDC_GRANT_TYPE_AUTHORIZATION_CODE", "OIDC_GRANT_TYPE_TOKEN_EXCHANGE"],
        appType: "OIDC_APP_TYPE_WEB",
        authMethodType: "OIDC_AUTH_METHOD_TYPE_BASIC",
      });
      const config = await rpConfig(short.url, app.clientId, app.clientSecret, client.ClientSecretBasic(app.clientSecret));
      const { location } = await codeOverHttp(
        short,
        { client_id: app.clientId, redirect_uri: "https://rp.example.com/cb", response_type: "code", scope: "openid" },
        "eve",
        PASSWORD,
      );
      const tokens = await client.authorizationCodeGrant(config, new URL(location));
      // valid now
      await exchange(config, { subject_token: tokens.access_token, subject_token_type: T.accessToken });
      // both expire together (same lifetime, issued in the same second)
      await new Promise((r) => setTimeout(r, decodeJwt(tokens.id_token!).exp! * 1000 + 1100 - Date.now()));
      for (const [token, type] of [
        [tokens.access_token, T.accessToken],
        [tokens.id_token!, T.idToken],
      ]) {
        const f = await failure(exchange(config, { subject_token: token!, subject_token_type: type! }));
        expect(f).toMatchObject({ error: "invalid_request", description: "subject_token is invalid, expired or revoked" });
      }
    } finally {
      await short.close();
    }
  });
});

describe("impersonation: the security settings and the actor's permission impersonation on the subject's organisation", () => {
  const forAlice = async (actor: string) => ({ subject_token: aliceId, subject_token_type: T.userId, actor_token: actor, actor_token_type: T.accessToken });

  it("refused while the security settings do not enable impersonation (the default), for every kind of actor", async () => {
    await setImpersonation(false);
    try {
      const actor = await machineToken(endUserImp, web);
      const cases = [
        await forAlice(actor),
        { subject_token: alice.access_token, subject_token_type: T.accessToken, actor_token: actor, actor_token_type: T.accessToken },
      ];
      for (const params of cases) {
        const f = await failure(exchange(webConfig, params));
        expect(f.error).toBe("invalid_request");
        expect(f.description).toMatch(/impersonation is not allowed: the security settings do not enable it/);
      }
      const jwt = await failure(
        exchange(await keyedConfig(), {
          subject_token: await clientJwt(aliceId),
          subject_token_type: T.jwt,
          actor_token: await machineToken(endUserImp, keyed),
          actor_token_type: T.accessToken,
        }),
      );
      expect(jwt.description).toMatch(/impersonation is not allowed/);
      // an exchange without an actor is no impersonation
      expect((await exchange(webConfig, { subject_token: alice.access_token, subject_token_type: T.accessToken })).access_token).toBeTruthy();
    } finally {
      await setImpersonation(true);
    }
  });

  it("judged in the subject's organisation: an organisation may turn it off for its users, and reset to the instance's", async () => {
    const forOlga = { subject_token: olgaId, subject_token_type: T.userId, actor_token: await machineToken(orgImp, web), actor_token_type: T.accessToken };
    expect((await exchange(webConfig, forOlga)).access_token).toBeTruthy();
    await setImpersonation(false, `?ctx.org_id=${otherOrg}`);
    expect((await failure(exchange(webConfig, forOlga))).description).toMatch(/impersonation is not allowed/);
    // alice's organisation still allows it
    expect((await exchange(webConfig, await forAlice(await machineToken(endUserImp, web)))).access_token).toBeTruthy();
    await setImpersonation("reset", `?ctx.org_id=${otherOrg}`);
    expect((await exchange(webConfig, forOlga)).access_token).toBeTruthy();
  });

  it("an actor without the role is refused; an organisation's impersonator only for its own organisation's users", async () => {
    const none = await failure(exchange(webConfig, await forAlice(await machineToken(noRole, web))));
    expect(none).toMatchObject({ error: "invalid_request" });
    expect(none.description).toMatch(/missing permission impersonation/);
    const otherOrgs = await failure(exchange(webConfig, await forAlice(await machineToken(orgImp, web))));
    expect(otherOrgs.description).toMatch(/missing permission impersonation/);
  });

  it("administrators (users with a membership) only by admin impersonators; end-user impersonators are refused", async () => {
    const bySupport = await failure(
      exchange(webConfig, {
        subject_token: samId,
        subject_token_type: T.userId,
        actor_token: await machineToken(endUserImp, web),
        actor_token_type: T.accessToken,
      }),
    );
    expect(bySupport.description).toMatch(/administrator: impersonating them needs the permission admin.impersonation/);
    const byAdmin = await exchange(webConfig, {
      subject_token: samId,
      subject_token_type: T.userId,
      actor_token: await machineToken(adminImp, web),
      actor_token_type: T.accessToken,
      requested_token_type: T.jwt,
    });
    expect(decodeJwt(byAdmin.access_token)).toMatchObject({ sub: samId, act: { sub: adminImp.id } });
  });

  it("the privilege ceiling (security review #1): an admin impersonator acts only for administrators whose roles it holds", async () => {
    // the first instance's admin-service is IAM_OWNER and SYSTEM_OWNER: acting as it would be owning the system
    const owner = await t.server.db.prisma.user.findFirstOrThrow({ where: { instanceId: t.instanceId, loginName: "admin-service" } });
    const refused = await failure(
      exchange(webConfig, {
        subject_token: owner.id,
        subject_token_type: T.userId,
        actor_token: await machineToken(adminImp, web),
        actor_token_type: T.accessToken,
      }),
    );
    expect(refused.description).toMatch(/member with (IAM|SYSTEM)_OWNER.*which the actor does not hold there/);
  });
});

describe("RFC 8693 §4.1 act: in JWT access tokens, introspection and ID tokens; nested; the event user.impersonated", () => {
  it("delegation: the user's own token with an actor token; act in all three places, and the tokens work", async () => {
    const actor = await machineToken(endUserImp, web);
    const params = { subject_token: alice.access_token, subject_token_type: T.accessToken, actor_token: actor, actor_token_type: T.accessToken };
    const act = { iss: t.url, sub: endUserImp.id };
    const jwt = await exchange(webConfig, { ...params, requested_token_type: T.jwt, scope: `openid ${API_SCOPE}` });
    expect((await jwtVerify(jwt.access_token, jwks(), { issuer: t.url })).payload.act).toEqual(act);
    expect(decodeJwt(jwt.id_token!).act).toEqual(act);
    const opaque = await exchange(webConfig, { ...params, scope: `openid offline_access ${API_SCOPE}` });
    expect(await introspect(opaque.access_token)).toMatchObject({ active: true, sub: aliceId, act, username: "alice@default.localhost" });
    expect(decodeJwt(opaque.id_token!).act).toEqual(act);
    // someone acting for the user gets no refresh token (its refreshes would lose act)
    expect(opaque.refresh_token).toBeUndefined();
    expect(opaque.scope).toBe(`openid ${API_SCOPE}`);
    // the issued tokens work: userinfo, and as an API credential (acting as alice)
    expect((await client.fetchUserInfo(webConfig, opaque.access_token, aliceId)).sub).toBe(aliceId);
    expect((await rest(t.url, "GET", "/settings/v3alpha/languages", { token: jwt.access_token })).status).toBe(200);
    // exchanged again without an actor, the token keeps its act: an exchange never hides who acts
    const again = await exchange(webConfig, { subject_token: opaque.access_token, subject_token_type: T.accessToken, requested_token_type: T.jwt });
    expect(decodeJwt(again.access_token).act).toEqual(act);
  });

  it("nested: an actor who itself acts for someone carries its actor inside", async () => {
    // adminImp acts for sam; sam (an end-user impersonator) then acts for alice with that token
    const samByAdmin = await exchange(webConfig, {
      subject_token: samId,
      subject_token_type: T.userId,
      actor_token: await machineToken(adminImp, web),
      actor_token_type: T.accessToken,
    });
    const r = await exchange(webConfig, {
      subject_token: aliceId,
      subject_token_type: T.userId,
      actor_token: samByAdmin.access_token,
      actor_token_type: T.accessToken,
      requested_token_type: T.jwt,
    });
    expect(decodeJwt(r.access_token).act).toEqual({ iss: t.url, sub: samId, act: { iss: t.url, sub: adminImp.id } });
    expect((await introspect((await exchange(webConfig, { subject_token: r.access_token, subject_token_type: T.accessToken })).access_token)).act).toEqual({
      iss: t.url,
      sub: samId,
      act: { iss: t.url, sub: adminImp.id },
    });
  });

  it("a chain of actors grows by one with each exchange with an actor, up to eight", async () => {
    const actor = await machineToken(endUserImp, web);
    let token = alice.access_token;
    for (let depth = 1; depth <= 8; depth++) {
      token = (await exchange(webConfig, { subject_token: token, subject_token_type: T.accessToken, actor_token: actor, actor_token_type: T.accessToken }))
        .access_token;
      let act = (await introspect(token)).act as { act?: unknown } | undefined;
      let length = 0;
      for (; act; act = act.act as typeof act) length++;
      expect(length).toBe(depth);
    }
    const f = await failure(
      exchange(webConfig, { subject_token: token, subject_token_type: T.accessToken, actor_token: actor, actor_token_type: T.accessToken }),
    );
    expect(f).toMatchObject({ error: "invalid_request", description: "the chain of actors would be longer than 8" });
  });

  it("50 concurrent impersonations of one user all succeed, each with its event (they queue on the user, never a 5xx)", async () => {
    const actor = await machineToken(endUserImp, web);
    const count = () => t.server.db.prisma.event.count({ where: { type: "user.impersonated", aggregateId: olgaId } });
    const before = await count();
    const params = { subject_token: olgaId, subject_token_type: T.userId, actor_token: actor, actor_token_type: T.accessToken };
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => exchange(webConfig, params)));
    expect(results.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
    expect(await count()).toBe(before + 50);
  });

  it("each impersonation appends user.impersonated, which event executions see with act; function executions see act too", async () => {
    // An actor of its own: the events of earlier tests' impersonations may reach the target too.
    const actor = await machine("event-imp", ["IAM_END_USER_IMPERSONATOR"], { instance: true });
    const events = await new TargetServer().start();
    const functions = await new TargetServer(() => ({ body: { desk: "support" } })).start();
    const target = async (name: string, url: string, kind: "restWebhook" | "restRequestResponse") =>
      (await api("POST", "/resources/v3alpha/targets", { name, [kind]: { url }, timeout: "5s" })).details.id as string;
    const onEvent = await target("impersonations", events.url, "restWebhook");
    const onToken = await target("pre-access-token", functions.url, "restRequestResponse");
    await api("POST", "/resources/v3alpha/executions", { condition: { event: { event: "user.impersonated" } }, targets: [onEvent] });
    await api("POST", "/resources/v3alpha/executions", { condition: { function: "preaccesstoken" }, targets: [onToken] });
    const count = () => t.server.db.prisma.event.count({ where: { type: "user.impersonated", aggregateId: aliceId } });
    try {
      const before = await count();
      const r = await exchange(webConfig, {
        subject_token: aliceId,
        subject_token_type: T.userId,
        actor_token: await machineToken(actor, web),
        actor_token_type: T.accessToken,
        requested_token_type: T.jwt,
      });
      const act = { iss: t.url, sub: actor.id };
      expect(await count()).toBe(before + 1);
      // the function saw who acts, and its claim is in the token
      expect(decodeJwt(r.access_token)).toMatchObject({ desk: "support", act });
      expect(functions.received.at(-1)!.body).toMatchObject({ function: "function/preaccesstoken", userID: aliceId, clientID: web.clientId, act });
      const deadline = Date.now() + 10_000;
      const ours = () => events.received.find((x) => x.body?.aggregate?.id === aliceId && x.body?.creator === actor.id);
      while (!ours() && Date.now() < deadline) await new Promise((ok) => setTimeout(ok, 50));
      const delivered = ours();
      expect(events.received.every((x) => x.body.type === "user.impersonated")).toBe(true);
      expect(delivered!.body).toMatchObject({
        type: "user.impersonated",
        aggregate: { type: "user", id: aliceId, resourceOwner: t.defaultOrgId },
        creator: actor.id,
        payload: { act, clientId: web.clientId },
      });
      // an exchange without an actor writes no such event
      await exchange(webConfig, { subject_token: alice.access_token, subject_token_type: T.accessToken });
      expect(await count()).toBe(before + 1);
    } finally {
      await api("DELETE", `/resources/v3alpha/executions/${encodeURIComponent("event/user.impersonated")}`);
      await api("DELETE", `/resources/v3alpha/executions/${encodeURIComponent("function/preaccesstoken")}`);
      await events.stop();
      await functions.stop();
    }
  });
});
