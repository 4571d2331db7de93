import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { addHuman, codeOverHttp, createApp } from "./rp.js";

// One row of the security checklist (§2) per test, over plain HTTP: no browser needed to see a Location header.
let t: TestServer;
let web: Awaited<ReturnType<typeof createApp>>;
let other: Awaited<ReturnType<typeof createApp>>;
let pub: Awaited<ReturnType<typeof createApp>>;
let native: Awaited<ReturnType<typeof createApp>>;
const PASSWORD = "Secr3t!pass";
const CB = "https://rp.example.com/cb";

beforeAll(async () => {
  t = await startTestServer();
  await addHuman(t, "bob", PASSWORD);
  const base = {
    appType: "OIDC_APP_TYPE_WEB",
    authMethodType: "OIDC_AUTH_METHOD_TYPE_BASIC",
    grantTypes: ["OIDC_GRANT_TYPE_AUTHORIZATION_CODE", "OIDC_GRANT_TYPE_REFRESH_TOKEN"],
  };
  web = await createApp(t, "web", { ...base, redirectUris: [CB] });
  other = await createApp(t, "other", { ...base, redirectUris: ["https://other.example.com/cb"] });
  pub = await createApp(t, "public", {
    redirectUris: ["https://spa.example.com/cb"],
    appType: "OIDC_APP_TYPE_USER_AGENT",
    authMethodType: "OIDC_AUTH_METHOD_TYPE_NONE",
  });
  native = await createApp(t, "native", {
    redirectUris: ["http://127.0.0.1:7000/cb"],
    appType: "OIDC_APP_TYPE_NATIVE",
    authMethodType: "OIDC_AUTH_METHOD_TYPE_NONE",
  });
});
afterAll(() => t?.close());

const authorize = (params: Record<string, string>, headers: Record<string, string> = {}) =>
  rest(t.url, "GET", `/oauth/v2/authorize?${new URLSearchParams(params)}`, { headers });
const valid = (extra: Record<string, string> = {}) => ({ client_id: web.clientId, redirect_uri: CB, response_type: "code", scope: "openid", ...extra });
const basic = (c: { clientId: string; clientSecret: string }) =>
  `Basic ${Buffer.from(`${encodeURIComponent(c.clientId)}:${encodeURIComponent(c.clientSecret)}`).toString("base64")}`;
const token = (body: Record<string, string>, auth = basic(web)) =>
  rest(t.url, "POST", "/oauth/v2/token", {
    body: new URLSearchParams(body).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", ...(auth ? { authorization: auth } : {}) },
  });
const errorOf = (location: string) => {
  const u = new URL(location);
  return new URLSearchParams(u.hash ? u.hash.slice(1) : u.search);
};

const codeFor = (params: Record<string, string>) => codeOverHttp(t, params, "bob", PASSWORD);

describe("redirect URIs (checklist 1, 7)", () => {
  it("anything but an exact match of a registered URI gets an error page and never a redirect", async () => {
    for (const redirect_uri of [
      `${CB}123`,
      CB.replace("/cb", "/Cb"),
      `${CB}?x=1`,
      `${CB}/`,
      "https://rp.example.com:8443/cb",
      "https://rp.example.com/cb/../cb",
      "https://rp.example.com/%2E%2E/cb",
      "https://evil.example/cb",
      "/cb",
      "file:///etc/passwd",
    ]) {
      const r = await authorize(valid({ redirect_uri }));
      expect(r.status, redirect_uri).toBe(400);
      expect(r.headers.location, redirect_uri).toBeUndefined();
      expect(r.headers["content-type"]).toMatch(/text\/html/);
    }
    const unknown = await authorize({ ...valid(), client_id: "unknown@x", redirect_uri: "https://evil.example/cb" });
    expect(unknown.status).toBe(400);
    expect(unknown.headers.location).toBeUndefined();
    expect((await authorize({ ...valid(), redirect_uri: "" })).headers.location).toBeUndefined();
  });

  it("native apps may vary only the port of a loopback IP redirect URI (RFC 8252 §7.3)", async () => {
    const params = { client_id: native.clientId, response_type: "code", scope: "openid", code_challenge: "a".repeat(43), code_challenge_method: "S256" };
    expect((await authorize({ ...params, redirect_uri: "http://127.0.0.1:51234/cb" })).status).toBe(303);
    expect((await authorize({ ...params, redirect_uri: "http://127.0.0.1:51234/other" })).status).toBe(400);
    expect((await authorize({ ...params, redirect_uri: "http://localhost:7000/cb" })).status).toBe(400);
  });

  it("errors go back to a registered URI with error, a clean description, the exact state (128 characters) and iss, never a code", async () => {
    const state = randomBytes(96).toString("base64url");
    expect(state).toHaveLength(128);
    const cases: [Record<string, string>, string][] = [
      [valid({ scope: "profile", state }), "invalid_scope"],
      [valid({ response_type: "token", state }), "unsupported_response_type"],
      [valid({ response_type: "id_token", nonce: "n", state }), "unauthorized_client"],
      [valid({ prompt: "none login", state }), "invalid_request"],
      [valid({ max_age: "-1", state }), "invalid_request"],
      [valid({ code_challenge: "x".repeat(43), code_challenge_method: "plain", state }), "invalid_request"],
      [valid({ id_token_hint: "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", state }), "invalid_request"],
      [valid({ request: "eyJ...", state }), "request_not_supported"],
      [valid({ prompt: "none", state }), "login_required"],
    ];
    for (const [params, error] of cases) {
      const r = await authorize(params);
      expect(r.status, error).toBe(303);
      const p = errorOf(r.headers.location!);
      expect(r.headers.location!.startsWith(CB), error).toBe(true);
      expect(p.get("error"), JSON.stringify(params)).toBe(error);
      expect(p.get("state")).toBe(state);
      expect(p.get("iss")).toBe(t.url);
      expect(p.get("code")).toBeNull();
      expect(p.get("error_description")).not.toMatch(/[\r\n\t]/);
    }
  });

  it("repeated parameters are refused; unknown parameters are ignored; no CORS on the authorization endpoint", async () => {
    const dup = await rest(t.url, "GET", `/oauth/v2/authorize?${new URLSearchParams(valid())}&scope=openid`);
    expect(dup.status).toBe(400);
    expect(dup.headers.location).toBeUndefined();
    expect((await authorize(valid({ unknown_param: "x" }))).status).toBe(303);
    const cors = await authorize(valid(), { origin: "https://evil.example" });
    expect(cors.headers["access-control-allow-origin"]).toBeUndefined();
    const tokenCors = await rest(t.url, "POST", "/oauth/v2/token", {
      body: "",
      headers: { origin: "https://spa.example.com", "content-type": "application/x-www-form-urlencoded" },
    });
    expect(tokenCors.headers["access-control-allow-origin"]).toBeTruthy();
  });
});

describe("PKCE (checklist 2)", () => {
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");

  it("a public client must send a S256 challenge", async () => {
    const r = await authorize({ client_id: pub.clientId, redirect_uri: "https://spa.example.com/cb", response_type: "code", scope: "openid" });
    expect(errorOf(r.headers.location!).get("error")).toBe("invalid_request");
  });

  it("the verifier must match; a verifier without a challenge (downgrade) is refused", async () => {
    const withPkce = await codeFor(valid({ code_challenge: challenge, code_challenge_method: "S256" }));
    expect(
      (await token({ grant_type: "authorization_code", code: withPkce.code, redirect_uri: CB, code_verifier: randomBytes(32).toString("base64url") })).body
        .error,
    ).toBe("invalid_grant");
    const plain = await codeFor(valid());
    const downgrade = await token({ grant_type: "authorization_code", code: plain.code, redirect_uri: CB, code_verifier: verifier });
    expect(downgrade.body.error).toBe("invalid_grant");
    const missing = await codeFor(valid({ code_challenge: challenge, code_challenge_method: "S256" }));
    expect((await token({ grant_type: "authorization_code", code: missing.code, redirect_uri: CB })).body.error).toBe("invalid_grant");
    const ok = await codeFor(valid({ code_challenge: challenge, code_challenge_method: "S256" }));
    expect((await token({ grant_type: "authorization_code", code: ok.code, redirect_uri: CB, code_verifier: verifier })).status).toBe(200);
  });
});

describe("codes and refresh tokens (checklist 3, 4, 5, 12)", () => {
  it("of 10 parallel redemptions of one code exactly one succeeds", async () => {
    const { code } = await codeFor(valid());
    const results = await Promise.all(Array.from({ length: 10 }, () => token({ grant_type: "authorization_code", code, redirect_uri: CB })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.body.error === "invalid_grant")).toHaveLength(9);
  });

  it("a code is bound to its client and its redirect URI", async () => {
    const a = await codeFor(valid());
    expect((await token({ grant_type: "authorization_code", code: a.code, redirect_uri: CB }, basic(other))).body.error).toBe("invalid_grant");
    const b = await codeFor(valid());
    expect((await token({ grant_type: "authorization_code", code: b.code, redirect_uri: "https://rp.example.com/other" })).body.error).toBe("invalid_grant");
    // refused attempts do not use the code up: its client, with its redirect URI, still redeems it
    expect((await token({ grant_type: "authorization_code", code: a.code, redirect_uri: CB })).status).toBe(200);
    expect((await token({ grant_type: "authorization_code", code: b.code, redirect_uri: CB })).status).toBe(200);
  });

  it("a refresh token is bound to its client; codes and refresh tokens carry 256 random bits; responses are not cached", async () => {
    const { code } = await codeFor(valid({ scope: "openid offline_access" }));
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const r = await token({ grant_type: "authorization_code", code, redirect_uri: CB });
    expect(r.headers["cache-control"]).toBe("no-store");
    expect(r.body.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(r.body.access_token.length).toBeGreaterThan(100);
    const stolen = await token({ grant_type: "refresh_token", refresh_token: r.body.refresh_token }, basic(other));
    expect(stolen.body.error).toBe("invalid_grant");
    // a stolen token tried by another client does not disturb its owner
    expect((await token({ grant_type: "refresh_token", refresh_token: r.body.refresh_token })).status).toBe(200);
  });

  it("revoking a refresh token revokes its access token too; revoking an access token leaves the refresh token", async () => {
    const form = (path: string, body: Record<string, string>) =>
      rest(t.url, "POST", path, {
        body: new URLSearchParams(body).toString(),
        headers: { "content-type": "application/x-www-form-urlencoded", authorization: basic(web) },
      });
    const active = async (tok: string) => (await form("/oauth/v2/introspect", { token: tok })).body.active;
    const first = (await token({ grant_type: "authorization_code", code: (await codeFor(valid({ scope: "openid offline_access" }))).code, redirect_uri: CB }))
      .body;
    expect(await active(first.access_token)).toBe(true);
    expect((await form("/oauth/v2/revoke", { token: first.access_token, token_type_hint: "access_token" })).status).toBe(200);
    expect(await active(first.access_token)).toBe(false);
    const refreshed = (await token({ grant_type: "refresh_token", refresh_token: first.refresh_token })).body;
    expect(await active(refreshed.access_token)).toBe(true);
    expect((await form("/oauth/v2/revoke", { token: refreshed.refresh_token })).status).toBe(200);
    expect(await active(refreshed.access_token)).toBe(false);
    expect((await token({ grant_type: "refresh_token", refresh_token: refreshed.refresh_token })).body.error).toBe("invalid_grant");
    // another client cannot revoke them
    const other2 = (await token({ grant_type: "authorization_code", code: (await codeFor(valid())).code, redirect_uri: CB })).body;
    const foreign = await rest(t.url, "POST", "/oauth/v2/revoke", {
      body: `token=${other2.access_token}`,
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: basic(other) },
    });
    expect(foreign.body.error).toBe("invalid_client");
    expect(await active(other2.access_token)).toBe(true);
  });

  it("client authentication failures are invalid_client with a Basic challenge", async () => {
    const { code } = await codeFor(valid());
    const r = await token({ grant_type: "authorization_code", code, redirect_uri: CB }, basic({ clientId: web.clientId, clientSecret: "wrong" }));
    expect(r.status).toBe(401);
    expect(r.body.error).toBe("invalid_client");
    expect(r.headers["www-authenticate"]).toMatch(/^Basic /);
  });
});
