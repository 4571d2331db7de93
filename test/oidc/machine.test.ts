import { randomUUID } from "node:crypto";
import { importPKCS8, SignJWT, createRemoteJWKSet, decodeJwt, jwtVerify, decodeProtectedHeader } from "jose";
import * as oauth from "oauth4webapi";
import * as client from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { TargetServer } from "../support/targets.js";
import { startTestServer, type TestServer } from "../support/server.js";

let t: TestServer;
let issuer: string;
let machine: { id: string; secret: string; keyFile: { keyId: string; key: string; userId: string } };
let api: { clientId: string; clientSecret: string };
let projectId: string;

const post = async (path: string, body: unknown = {}) => {
  const r = await rest(t.url, "POST", `/resources/v3alpha${path}`, { token: t.adminPat, body });
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
  return r.body;
};

/** openid-client's configuration for a client of this server (plain http on loopback is allowed for the tests). */
async function configFor(clientId: string, secret?: string, auth?: client.ClientAuth) {
  return client.discovery(new URL(issuer), clientId, secret, auth, { execute: [client.allowInsecureRequests] });
}

/** A JWT profile assertion of the machine's key; `claims` override the valid defaults. */
async function assertion(claims: Record<string, unknown> = {}, key = machine.keyFile) {
  const now = Math.floor(Date.now() / 1000);
  const payload = { jti: randomUUID(), iss: key.userId, sub: key.userId, aud: issuer, iat: now, exp: now + 300, ...claims };
  return new SignJWT(payload).setProtectedHeader({ alg: "RS256", kid: key.keyId }).sign(await importPKCS8(key.key, "RS256"));
}

/** The JWT profile grant through oauth4webapi's generic grant request. */
async function jwtProfile(scope: string, jwt?: string) {
  const as = await oauth.processDiscoveryResponse(new URL(issuer), await oauth.discoveryRequest(new URL(issuer), { [oauth.allowInsecureRequests]: true }));
  const res = await oauth.genericTokenEndpointRequest(
    as,
    { client_id: machine.id },
    oauth.None(),
    "urn:ietf:params:oauth:grant-type:jwt-bearer",
    { assertion: jwt ?? (await assertion()), scope },
    { [oauth.allowInsecureRequests]: true },
  );
  return { as, res };
}

beforeAll(async () => {
  t = await startTestServer();
  issuer = t.url;
  const m = await post("/users", { username: "robot", machine: { name: "Robot", accessTokenType: "ACCESS_TOKEN_TYPE_JWT" } });
  const secret = await post(`/users/${m.details.id}/_generate_secret`);
  const key = await post(`/users/${m.details.id}/keys`, {});
  machine = { id: m.details.id, secret: secret.clientSecret, keyFile: JSON.parse(key.keyContent) };
  await post("/memberships", { userId: m.details.id, context: { instance: true }, roles: ["IAM_OWNER_VIEWER"] });
  projectId = (await post("/projects", { name: "Resource API" })).details.id;
  const app = await post(`/projects/${projectId}/applications`, { name: "resource-server", api: { authMethodType: "API_AUTH_METHOD_TYPE_BASIC" } });
  api = { clientId: app.clientId, clientSecret: app.clientSecret };
});
afterAll(() => t?.close());

describe("discovery and keys", () => {
  it("describe the instance of the Host with every endpoint", async () => {
    const config = await configFor("x");
    const md = config.serverMetadata();
    expect(md.issuer).toBe(issuer);
    expect(md).toMatchObject({
      authorization_endpoint: `${issuer}/oauth/v2/authorize`,
      token_endpoint: `${issuer}/oauth/v2/token`,
      introspection_endpoint: `${issuer}/oauth/v2/introspect`,
      userinfo_endpoint: `${issuer}/oidc/v1/userinfo`,
      revocation_endpoint: `${issuer}/oauth/v2/revoke`,
      end_session_endpoint: `${issuer}/oidc/v1/end_session`,
      jwks_uri: `${issuer}/oauth/v2/keys`,
      code_challenge_methods_supported: ["S256"],
      response_types_supported: ["code", "id_token", "id_token token"],
    });
    const other = await rest(t.url, "GET", "/.well-known/openid-configuration", { host: `localhost:${t.port}` });
    expect(other.body.issuer).toBe(`http://localhost:${t.port}`);
    expect((await rest(t.url, "GET", "/.well-known/openid-configuration", { host: "unknown.example" })).status).toBe(404);
  });

  it("publish the signing key with its kid, cacheable, without private parts", async () => {
    const first = await rest(t.url, "GET", "/oauth/v2/keys");
    expect(first.headers["cache-control"]).toMatch(/max-age=\d+/);
    expect(first.body.keys).toHaveLength(1);
    expect(first.body.keys[0]).toMatchObject({ kty: "RSA", alg: "RS256", use: "sig" });
    expect(first.body.keys[0].kid).toBeTruthy();
    expect(JSON.stringify(first.body)).not.toMatch(/"d"|"p"|"q"/);
  });

  it("rotate on demand: new tokens get the new kid, a token signed by the old key still verifies", async () => {
    const config = await configFor("robot", machine.secret);
    const old = (await client.clientCredentialsGrant(config, { scope: "urn:svc:iam:org:project:id:svc:aud" })).access_token;
    const oldKid = decodeProtectedHeader(old).kid;
    const rotated = await rest(t.url, "POST", "/resources/v3alpha/web_keys/_rotate", { token: t.adminPat });
    expect(rotated.status).toBe(200);
    expect(rotated.body.id).not.toBe(oldKid);
    const listed = await rest(t.url, "GET", "/resources/v3alpha/web_keys", { token: t.adminPat });
    expect(listed.body.result.map((k: { id: string; signing: boolean }) => [k.id, k.signing])).toEqual([
      [rotated.body.id, true],
      [oldKid, false],
    ]);
    const fresh = (await client.clientCredentialsGrant(config, { scope: "urn:svc:iam:org:project:id:svc:aud" })).access_token;
    expect(decodeProtectedHeader(fresh).kid).toBe(rotated.body.id);
    const jwks = createRemoteJWKSet(new URL(`${issuer}/oauth/v2/keys`));
    await jwtVerify(old, jwks, { issuer });
    await jwtVerify(fresh, jwks, { issuer });
    expect((await rest(t.url, "GET", "/settings/v3alpha/languages", { token: old })).status).toBe(200);
    // viewers may list keys, not rotate them
    const viewer = await t.serviceUser("key-viewer", [{ type: "instance", id: t.instanceId, roles: ["IAM_OWNER_VIEWER"] }]);
    expect((await rest(t.url, "GET", "/resources/v3alpha/web_keys", { token: viewer.token })).status).toBe(200);
    expect((await rest(t.url, "POST", "/resources/v3alpha/web_keys/_rotate", { token: viewer.token })).status).toBe(403);
  });
});

describe("client credentials", () => {
  it("give a machine user a token for its username and secret (basic and post), refused with a wrong one", async () => {
    const config = await configFor("robot", machine.secret);
    const tokens = await client.clientCredentialsGrant(config, { scope: `urn:svc:iam:org:project:id:${projectId}:aud` });
    expect(tokens.token_type.toLowerCase()).toBe("bearer");
    expect(tokens.expires_in).toBeGreaterThan(0);
    // a JWT access token, as the machine user asks for, signed with a published key
    const jwks = createRemoteJWKSet(new URL(`${issuer}/oauth/v2/keys`));
    const { payload } = await jwtVerify(tokens.access_token, jwks, { issuer, audience: projectId });
    expect(payload.sub).toBe(machine.id);
    const post = await configFor("robot", machine.secret, client.ClientSecretPost(machine.secret));
    expect((await client.clientCredentialsGrant(post)).access_token).toBeTruthy();
    const wrong = await configFor("robot", "wrong-secret", client.ClientSecretBasic("wrong-secret"));
    // RFC 6749 §5.2: 401 with a WWW-Authenticate challenge of the scheme the client used
    const refused = await client
      .clientCredentialsGrant(wrong)
      .catch((e: unknown) => e as { status: number; cause: { scheme: string; parameters: { error: string } }[] });
    expect(refused).toMatchObject({ status: 401, cause: [{ scheme: "basic", parameters: { error: "invalid_client" } }] });
    const raw = await rest(t.url, "POST", "/oauth/v2/token", {
      body: "grant_type=client_credentials&client_id=robot&client_secret=nope",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(raw.status).toBe(401);
    expect(raw.headers["cache-control"]).toBe("no-store");
  });

  it("access tokens with the API audience authenticate API calls; others and revoked ones do not; only their client revokes them", async () => {
    const config = await configFor("robot", machine.secret);
    // for the APIs and for the resource server's project, so that the resource server can introspect it too
    const forApi = await client.clientCredentialsGrant(config, { scope: `urn:svc:iam:org:project:id:svc:aud urn:svc:iam:org:project:id:${projectId}:aud` });
    const call = (token: string) => rest(t.url, "GET", "/settings/v3alpha/languages", { token });
    const ok = await call(forApi.access_token);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const notForApi = await client.clientCredentialsGrant(config, { scope: `urn:svc:iam:org:project:id:${projectId}:aud` });
    expect((await call(notForApi.access_token)).status).toBe(401);
    const rs = await configFor(api.clientId, api.clientSecret, client.ClientSecretBasic(api.clientSecret));
    expect((await client.tokenIntrospection(rs, forApi.access_token)).active).toBe(true);
    const revoke = (clientId: string, secret: string) =>
      rest(t.url, "POST", "/oauth/v2/revoke", {
        body: `token=${forApi.access_token}`,
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString("base64")}`,
        },
      });
    // the resource server did not get the token, so it may not revoke it: refused, and the token still works
    const foreign = await revoke(api.clientId, api.clientSecret);
    expect(foreign.status, JSON.stringify(foreign.body)).toBe(401);
    expect(foreign.body.error).toBe("invalid_client");
    expect((await call(forApi.access_token)).status).toBe(200);
    expect((await client.tokenIntrospection(rs, forApi.access_token)).active).toBe(true);
    // revocation by the client that owns the token
    const owner = await revoke("robot", machine.secret);
    expect(owner.status, JSON.stringify(owner.body)).toBe(200);
    expect((await call(forApi.access_token)).status).toBe(401);
    expect(await client.tokenIntrospection(rs, forApi.access_token)).toEqual({ active: false });
  });
});

describe("JWT profile grant", () => {
  it("gives a token and an ID token for a signed assertion of a key created through the API", async () => {
    const { as, res } = await jwtProfile("openid profile");
    const tokens = await oauth.processGenericTokenEndpointResponse(as, { client_id: machine.id }, res);
    expect(tokens.access_token).toBeTruthy();
    expect(tokens.id_token).toBeTruthy();
    expect(decodeProtectedHeader(tokens.id_token!).kid).toBeTruthy();
    const info = await rest(t.url, "GET", "/oidc/v1/userinfo", { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({ sub: machine.id, preferred_username: "robot", name: "Robot" });
  });

  it("refuses replays, wrong audiences, expired and future assertions, and foreign keys", async () => {
    // the same assertion ten times at once: exactly one token
    const racing = await assertion();
    const statuses = await Promise.all(Array.from({ length: 10 }, async () => (await jwtProfile("openid", racing)).res.status));
    expect(statuses.filter((x) => x === 200)).toHaveLength(1);
    const once = await assertion();
    expect((await jwtProfile("openid", once)).res.status).toBe(200);
    const replay = await jwtProfile("openid", once);
    expect(replay.res.status).toBe(400);
    expect((await replay.res.json()).error).toBe("invalid_grant");
    const now = Math.floor(Date.now() / 1000);
    const bad = [
      await assertion({ aud: "https://elsewhere.example" }),
      await assertion({ exp: now - 60 }),
      await assertion({ iat: now - 7200 }),
      await assertion({ nbf: now + 600 }),
      await assertion({ sub: "someone-else" }),
    ];
    for (const jwt of bad) {
      const r = await jwtProfile("openid", jwt);
      expect(r.res.status).toBe(400);
      expect((await r.res.json()).error).toBe("invalid_grant");
    }
    // alg none is never accepted
    const [, body] = once.split(".");
    const none = `${Buffer.from(JSON.stringify({ alg: "none", kid: machine.keyFile.keyId })).toString("base64url")}.${body}.`;
    expect((await jwtProfile("openid", none)).res.status).toBe(400);
  });
});

describe("introspection, userinfo and revocation", () => {
  it("introspection needs the API's credentials; a token is active only for its audience and until revoked", async () => {
    const config = await configFor("robot", machine.secret);
    const token = (await client.clientCredentialsGrant(config, { scope: `urn:svc:iam:org:project:id:${projectId}:aud` })).access_token;
    const rs = await configFor(api.clientId, api.clientSecret, client.ClientSecretBasic(api.clientSecret));
    const active = await client.tokenIntrospection(rs, token);
    expect(active).toMatchObject({ active: true, sub: machine.id, client_id: "robot", iss: issuer, token_type: "Bearer" });
    expect(active.aud).toContain(projectId);
    const otherAudience = (await client.clientCredentialsGrant(config, {})).access_token;
    expect((await client.tokenIntrospection(rs, otherAudience)).active).toBe(false);
    expect((await client.tokenIntrospection(rs, "not-a-token")).active).toBe(false);
    const bad = await rest(t.url, "POST", "/oauth/v2/introspect", {
      body: `token=${token}`,
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${Buffer.from(`${api.clientId}:wrong`).toString("base64")}` },
    });
    expect(bad.status).toBe(401);
    expect(bad.body.error).toBe("invalid_client");
    await client.tokenRevocation(config, token);
    expect((await client.tokenIntrospection(rs, token)).active).toBe(false);
    // unknown tokens revoke successfully (RFC 7009)
    await client.tokenRevocation(config, "unknown-token");
  });

  it("userinfo answers GET and POST, and 401 for an invalid token", async () => {
    const { as, res } = await jwtProfile("openid email");
    const tokens = await oauth.processGenericTokenEndpointResponse(as, { client_id: machine.id }, res);
    const viaPost = await rest(t.url, "POST", "/oidc/v1/userinfo", {
      body: `access_token=${tokens.access_token}`,
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(viaPost.body.sub).toBe(machine.id);
    const invalid = await rest(t.url, "GET", "/oidc/v1/userinfo", { headers: { authorization: "Bearer nope" } });
    expect(invalid.status).toBe(401);
    expect(invalid.headers["www-authenticate"]).toMatch(/^Bearer error="invalid_token"/);
  });
});

describe("token endpoint errors", () => {
  const form = (body: string, headers: Record<string, string> = {}) =>
    rest(t.url, "POST", "/oauth/v2/token", { body, headers: { "content-type": "application/x-www-form-urlencoded", ...headers } });
  it("answers each error of the specification's table in its condition", async () => {
    expect((await form("")).body.error).toBe("invalid_request");
    expect((await form("grant_type=password")).body.error).toBe("unsupported_grant_type");
    expect((await form("grant_type=client_credentials&grant_type=client_credentials&client_id=robot&client_secret=x")).body.error).toBe("invalid_request");
    expect((await form(`grant_type=client_credentials&client_id=robot&client_secret=${machine.secret}&scope=unknown-scope`)).body.error).toBe("invalid_scope");
    const both = await form(`grant_type=client_credentials&client_id=robot&client_secret=${machine.secret}`, {
      authorization: `Basic ${Buffer.from(`robot:${machine.secret}`).toString("base64")}`,
    });
    expect(both.body.error).toBe("invalid_request");
    expect((await form("grant_type=client_credentials&client_id=nobody&client_secret=x")).body.error).toBe("invalid_client");
    expect((await form("grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer")).body.error).toBe("invalid_request");
    expect((await form("grant_type=authorization_code&client_id=robot")).body.error).toBe("invalid_client");
    for (const r of [await form(""), await form("grant_type=password")]) expect(r.headers["cache-control"]).toBe("no-store");
  });
});

describe("function executions", () => {
  it("a rest_request_response target adds claims before the access token and the userinfo response are made", async () => {
    const target = await new TargetServer((got) => ({
      body: {
        ...got.body.claims,
        [got.body.function === "function/preaccesstoken" ? "department" : "team"]: "billing",
        // Claims the server gives a meaning may not be set or forged by a function, also those the grant leaves out.
        ...{ sub: "forged", amr: ["mfa"], act: { sub: "someone" }, sid: "s1", auth_time: 1, nbf: 1 },
      },
    })).start();
    try {
      const created = await post("/targets", { name: "claims", restRequestResponse: { url: target.url }, timeout: "2s" });
      for (const fn of ["preaccesstoken", "preuserinfo"]) await post("/executions", { condition: { function: fn }, targets: [created.details.id] });
      const { as, res } = await jwtProfile("openid profile");
      const tokens = await oauth.processGenericTokenEndpointResponse(as, { client_id: machine.id }, res);
      const claims = decodeJwt(tokens.access_token);
      expect(claims).toMatchObject({ department: "billing", sub: machine.id, amr: ["private_key_jwt"] });
      for (const forged of ["act", "sid", "auth_time", "nbf"]) expect(claims, forged).not.toHaveProperty(forged);
      const info = await rest(t.url, "GET", "/oidc/v1/userinfo", { headers: { authorization: `Bearer ${tokens.access_token}` } });
      expect(info.body).toMatchObject({ team: "billing", sub: machine.id });
      expect(target.received.map((r) => r.body.function)).toEqual(["function/preaccesstoken", "function/preuserinfo"]);
      expect(target.received[0]!.body).toMatchObject({ instanceID: t.instanceId, userID: machine.id });
    } finally {
      await target.stop();
      for (const fn of ["preaccesstoken", "preuserinfo"])
        await rest(t.url, "DELETE", `/resources/v3alpha/executions/${encodeURIComponent(`function/${fn}`)}`, { token: t.adminPat });
    }
  });
});
