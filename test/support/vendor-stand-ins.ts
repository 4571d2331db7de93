import { randomBytes } from "node:crypto";
import type { KeyObject } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK, jwtVerify, SignJWT, decodeProtectedHeader } from "jose";

/**
 * Stand-ins for the fixed vendors of the vendor identity provider kinds (GitHub, GitHub Enterprise, Azure AD,
 * Apple), each a node:http server on loopback that speaks the vendor's protocol as the vendor does (its paths,
 * its answers' shapes, its quirks) and keeps what it received for the tests' assertions. The server reaches
 * them through SVC_IDP_ENDPOINT_OVERRIDES (the vendor's fixed origin replaced by the stand-in's). Google and
 * GitLab are OpenID Connect providers: test/support/external-op.ts (oidc-provider) stands in for them.
 */

/** A request's body, as text. */
function bodyOf(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (c) => (text += c));
    req.on("end", () => resolve(text));
    req.on("error", reject);
  });
}

const json = (res: http.ServerResponse, status: number, body: unknown) =>
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" }).end(JSON.stringify(body));

const text = (res: http.ServerResponse, status: number, body: string) => res.writeHead(status, { "content-type": "text/plain; charset=utf-8" }).end(body);

const token = (prefix: string) => `${prefix}_${randomBytes(18).toString("base64url")}`;

/** The client's credentials of a token request: the form's client_id/client_secret, else HTTP Basic. */
function clientCredentials(req: http.IncomingMessage, form: URLSearchParams): { id: string; secret: string; method: "post" | "basic" | "none" } {
  const basic = /^Basic\s+(.+)$/i.exec(req.headers.authorization ?? "");
  if (basic) {
    const decoded = Buffer.from(basic[1]!, "base64").toString("utf8");
    const at = decoded.indexOf(":");
    return { id: decodeURIComponent(decoded.slice(0, at)), secret: decodeURIComponent(decoded.slice(at + 1)), method: "basic" };
  }
  if (form.has("client_secret")) return { id: form.get("client_id") ?? "", secret: form.get("client_secret") ?? "", method: "post" };
  return { id: form.get("client_id") ?? "", secret: "", method: "none" };
}

/** The bearer token of an API request (GitHub also takes `token <t>`). */
const bearerOf = (req: http.IncomingMessage) => /^(?:Bearer|token)\s+(\S+)$/i.exec(req.headers.authorization ?? "")?.[1];

async function listen(server: http.Server, host = "127.0.0.1", port = 0): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

const closeAll = (servers: http.Server[]) =>
  Promise.all(
    servers.map(
      (s) =>
        new Promise<void>((r) => {
          s.closeAllConnections();
          s.close(() => r());
        }),
    ),
  ).then(() => undefined);

/** A request the stand-in received: its path, query or form, and the headers the assertions look at. */
export interface Received {
  method: string;
  path: string;
  /** The query (GET) or the form (POST), as sent. */
  params: Record<string, string>;
  headers: http.IncomingHttpHeaders;
}

const received = (req: http.IncomingMessage, url: URL, form?: URLSearchParams): Received => ({
  method: req.method ?? "",
  path: url.pathname,
  params: Object.fromEntries(form ?? url.searchParams),
  headers: req.headers,
});

/**
 * A free loopback port for a server to bind later (SVC_PORT), outside the ephemeral range the kernel hands out
 * for `listen(0)` and outgoing connections, so that no other server or connection of the run takes it meanwhile.
 */
export async function reservePort(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const probe = http.createServer();
    try {
      await listen(probe, "127.0.0.1", port);
      await closeAll([probe]);
      return port;
    } catch {
      // taken: another one
    }
  }
  throw new Error("no free port between 20000 and 32000");
}

// ---------------------------------------------------------------------------------------------------------------
// GitHub (github.com and api.github.com on one port) and GitHub Enterprise (the same paths, the API under /api/v3)

export interface GitHubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
  visibility?: "public" | "private" | null;
}

export interface GitHubUser {
  id: number;
  login: string;
  name: string | null;
  email: string | null;
  emails: GitHubEmail[];
}

export const OCTO: GitHubUser = {
  id: 12345,
  login: "octo",
  name: "Octo Cat",
  email: null,
  emails: [
    { email: "octo@users.example", primary: true, verified: true, visibility: "private" },
    { email: "other@x", primary: false, verified: false, visibility: null },
  ],
};

export interface GitHubStandIn {
  /** http://127.0.0.1:<port>: github.com's and api.github.com's replacement, and GitHub Enterprise's host. */
  origin: string;
  clientId: string;
  clientSecret: string;
  /** The login of the user who "is signed in" at GitHub: the next authorization is theirs (no login page). */
  signedIn: string;
  /** GET /login/oauth/authorize: client_id, redirect_uri, scope, state, code_challenge(_method) if any. */
  authorizations: Received[];
  /** POST /login/oauth/access_token, with the outcome the stand-in gave. */
  tokenRequests: (Received & { client: ReturnType<typeof clientCredentials>; outcome: string })[];
  /** /user and /user/emails (at / and under /api/v3). */
  apiRequests: (Received & { status: number })[];
  close(): Promise<void>;
}

/**
 * GitHub's OAuth app flow as github.com serves it: the authorize page sends the browser straight back with a code
 * (the user "signed in and authorized" already), the token endpoint answers JSON only when asked for it
 * (`accept: application/json`; else a form) and its errors with status 200, the REST API answers the user (the
 * numeric `id`, `login`, and `email` null for a private address) and the e-mails (`user:email` or `user` scope
 * needed, else 404 as GitHub does).
 */
export async function startGitHubStandIn(opts: { users?: GitHubUser[]; clientId?: string; clientSecret?: string } = {}): Promise<GitHubStandIn> {
  const users = opts.users ?? [OCTO];
  const codes = new Map<string, { login: string; clientId: string; redirectUri: string; scope: string; used: boolean }>();
  const tokens = new Map<string, { login: string; scope: string }>();
  const server = http.createServer();
  const stand: GitHubStandIn = {
    origin: "",
    clientId: opts.clientId ?? "Iv1.gh0standin0001",
    clientSecret: opts.clientSecret ?? "github-stand-in-client-secret-0123456789abcdef",
    signedIn: users[0]!.login,
    authorizations: [],
    tokenRequests: [],
    apiRequests: [],
    close: () => closeAll([server]),
  };
  server.on("request", async (req, res) => {
    const url = new URL(req.url ?? "/", stand.origin);
    const path = url.pathname.replace(/^\/api\/v3(?=\/)/, "");
    if (req.method === "GET" && url.pathname === "/login/oauth/authorize") {
      const r = received(req, url);
      stand.authorizations.push(r);
      const q = r.params;
      if (q.client_id !== stand.clientId || !q.redirect_uri) return text(res, 404, "Not Found: no such application or no redirect_uri");
      const code = token("ghc");
      codes.set(code, { login: stand.signedIn, clientId: q.client_id, redirectUri: q.redirect_uri, scope: q.scope ?? "", used: false });
      const back = new URL(q.redirect_uri);
      back.searchParams.set("code", code);
      if (q.state !== undefined) back.searchParams.set("state", q.state);
      return res.writeHead(302, { location: back.href }).end();
    }
    if (req.method === "POST" && url.pathname === "/login/oauth/access_token") {
      const form = new URLSearchParams(await bodyOf(req));
      const client = clientCredentials(req, form);
      const code = codes.get(form.get("code") ?? "");
      let outcome = "ok";
      if (client.id !== stand.clientId || client.secret !== stand.clientSecret) outcome = "incorrect_client_credentials";
      else if (!code || code.used || code.clientId !== client.id) outcome = "bad_verification_code";
      else if (form.has("redirect_uri") && form.get("redirect_uri") !== code.redirectUri) outcome = "redirect_uri_mismatch";
      stand.tokenRequests.push({ ...received(req, url, form), client, outcome });
      const wantsJson = (req.headers.accept ?? "").includes("application/json");
      const answer = (body: Record<string, string>) =>
        wantsJson
          ? json(res, 200, body)
          : res.writeHead(200, { "content-type": "application/x-www-form-urlencoded" }).end(new URLSearchParams(body).toString());
      // GitHub answers its errors with 200, an `error` field and no token.
      if (outcome !== "ok") return answer({ error: outcome, error_description: outcome.replace(/_/g, " ") });
      code!.used = true;
      const access = token("gho");
      tokens.set(access, { login: code!.login, scope: code!.scope });
      return answer({
        access_token: access,
        token_type: "bearer",
        scope: code!.scope
          .split(/[\s,]+/)
          .filter(Boolean)
          .join(","),
      });
    }
    if (req.method === "GET" && (path === "/user" || path === "/user/emails")) {
      const grant = tokens.get(bearerOf(req) ?? "");
      const user = grant && users.find((u) => u.login === grant.login);
      const record = (status: number) => stand.apiRequests.push({ ...received(req, url), status });
      if (!user) {
        record(401);
        return json(res, 401, { message: "Bad credentials", documentation_url: "https://docs.github.com/rest" });
      }
      if (path === "/user") {
        record(200);
        const { emails: _, ...profile } = user;
        return json(res, 200, { ...profile, node_id: `U_${user.id}`, type: "User", site_admin: false });
      }
      const scopes = grant.scope.split(/[\s,]+/);
      if (!scopes.includes("user:email") && !scopes.includes("user")) {
        record(404);
        return json(res, 404, { message: "Not Found", documentation_url: "https://docs.github.com/rest/users/emails" });
      }
      record(200);
      return json(res, 200, user.emails);
    }
    return text(res, 404, "Not Found");
  });
  stand.origin = `http://127.0.0.1:${await listen(server)}`;
  return stand;
}

// ---------------------------------------------------------------------------------------------------------------
// Azure AD (login.microsoftonline.com and graph.microsoft.com on one port)

export interface AzureUser {
  id: string;
  displayName: string;
  givenName: string | null;
  surname: string | null;
  mail: string | null;
  userPrincipalName: string;
}

export const ADELE: AzureUser = {
  id: "aad-1",
  displayName: "Adele Vance",
  givenName: "Adele",
  surname: "Vance",
  mail: null,
  userPrincipalName: "adele@contoso.example",
};

export interface AzureStandIn {
  /** http://127.0.0.1:<port>: login.microsoftonline.com's and graph.microsoft.com's replacement. */
  origin: string;
  clientId: string;
  clientSecret: string;
  /** The userPrincipalName of the user who "is signed in" at Microsoft: the next authorization is theirs. */
  signedIn: string;
  /** GET /<tenant>/oauth2/v2.0/authorize, with the tenant of its path. */
  authorizations: (Received & { tenant: string })[];
  /** POST /<tenant>/oauth2/v2.0/token, with the outcome. */
  tokenRequests: (Received & { tenant: string; client: ReturnType<typeof clientCredentials>; outcome: string })[];
  /** GET /v1.0/me */
  graphRequests: (Received & { status: number })[];
  close(): Promise<void>;
}

/**
 * The Microsoft identity platform's v2.0 endpoints of a tenant (the authorize page sends the browser straight back
 * with a code, the code is redeemed only at the tenant it was issued at) and Microsoft Graph's /v1.0/me.
 */
export async function startAzureStandIn(opts: { users?: AzureUser[]; clientId?: string; clientSecret?: string } = {}): Promise<AzureStandIn> {
  const users = opts.users ?? [ADELE];
  const codes = new Map<string, { upn: string; tenant: string; clientId: string; redirectUri: string; scope: string; used: boolean }>();
  const tokens = new Map<string, { upn: string; scope: string }>();
  const server = http.createServer();
  const stand: AzureStandIn = {
    origin: "",
    clientId: opts.clientId ?? "6f1e0a2b-0000-4000-8000-00000000a2ad",
    clientSecret: opts.clientSecret ?? "azure~stand-in~client~secret~0123456789",
    signedIn: users[0]!.userPrincipalName,
    authorizations: [],
    tokenRequests: [],
    graphRequests: [],
    close: () => closeAll([server]),
  };
  server.on("request", async (req, res) => {
    const url = new URL(req.url ?? "/", stand.origin);
    const endpoint = /^\/([^/]+)\/oauth2\/v2\.0\/(authorize|token)$/.exec(url.pathname);
    if (req.method === "GET" && endpoint?.[2] === "authorize") {
      const tenant = decodeURIComponent(endpoint[1]!);
      const r = { ...received(req, url), tenant };
      stand.authorizations.push(r);
      const q = r.params;
      if (q.client_id !== stand.clientId || !q.redirect_uri || q.response_type !== "code") {
        return text(res, 400, "AADSTS700016: unknown application, no redirect_uri or a response_type other than code");
      }
      const code = token("aadcode");
      codes.set(code, { upn: stand.signedIn, tenant, clientId: q.client_id, redirectUri: q.redirect_uri, scope: q.scope ?? "", used: false });
      const back = new URL(q.redirect_uri);
      back.searchParams.set("code", code);
      if (q.state !== undefined) back.searchParams.set("state", q.state);
      back.searchParams.set("session_state", "00000000-0000-0000-0000-000000000000");
      return res.writeHead(302, { location: back.href }).end();
    }
    if (req.method === "POST" && endpoint?.[2] === "token") {
      const tenant = decodeURIComponent(endpoint[1]!);
      const form = new URLSearchParams(await bodyOf(req));
      const client = clientCredentials(req, form);
      const code = codes.get(form.get("code") ?? "");
      let outcome = "ok";
      if (client.id !== stand.clientId || client.secret !== stand.clientSecret) outcome = "invalid_client";
      else if (form.get("grant_type") !== "authorization_code") outcome = "unsupported_grant_type";
      else if (!code || code.used || code.clientId !== client.id || code.tenant !== tenant) outcome = "invalid_grant";
      else if (form.get("redirect_uri") !== code.redirectUri) outcome = "invalid_grant (redirect_uri)";
      stand.tokenRequests.push({ ...received(req, url, form), tenant, client, outcome });
      if (outcome !== "ok") return json(res, outcome === "invalid_client" ? 401 : 400, { error: outcome.split(" ")[0], error_description: outcome });
      code!.used = true;
      const access = token("eyJ0eXAiOiJKV1Qi");
      tokens.set(access, { upn: code!.upn, scope: code!.scope });
      return json(res, 200, { token_type: "Bearer", scope: code!.scope, expires_in: 3599, ext_expires_in: 3599, access_token: access });
    }
    if (req.method === "GET" && url.pathname === "/v1.0/me") {
      const grant = tokens.get(bearerOf(req) ?? "");
      const user = grant && users.find((u) => u.userPrincipalName === grant.upn);
      if (!user) {
        stand.graphRequests.push({ ...received(req, url), status: 401 });
        return json(res, 401, { error: { code: "InvalidAuthenticationToken", message: "Access token validation failure." } });
      }
      stand.graphRequests.push({ ...received(req, url), status: 200 });
      return json(res, 200, {
        "@odata.context": "https://graph.microsoft.com/v1.0/$metadata#users/$entity",
        businessPhones: [],
        jobTitle: null,
        mobilePhone: null,
        officeLocation: null,
        preferredLanguage: null,
        ...user,
      });
    }
    return text(res, 404, "Not Found");
  });
  stand.origin = `http://127.0.0.1:${await listen(server)}`;
  return stand;
}

// ---------------------------------------------------------------------------------------------------------------
// Sign in with Apple (appleid.apple.com)

export interface AppleClient {
  /** The Services ID. */
  clientId: string;
  /** The team ID (10 characters): the client secret's `iss`. */
  teamId: string;
  /** The key's ID (10 characters): the client secret's `kid`. */
  keyId: string;
}

/** What the token endpoint made of the client secret (an ES256 JWT the client signs). */
export interface AppleSecretCheck {
  verified: boolean;
  /** Why it was refused. */
  error?: string;
  header?: Record<string, unknown>;
  claims?: Record<string, unknown>;
}

export interface AppleStandIn {
  /** http://localhost:<port>: appleid.apple.com's replacement (another site than the server's 127.0.0.1). */
  origin: string;
  client: AppleClient;
  /** The user's name and e-mail the page posts as `user` on a first authorization. */
  user: { name: { firstName: string; lastName: string }; email: string };
  /** GET /auth/authorize */
  authorizations: Received[];
  /** POST /auth/token, with the client secret's check and the outcome. */
  tokenRequests: (Received & { client: ReturnType<typeof clientCredentials>; secret: AppleSecretCheck; outcome: string })[];
  /** The ID tokens it issued. */
  idTokens: string[];
  close(): Promise<void>;
}

/** Apple's fixed audience of a client secret, whatever origin serves the token endpoint. */
export const APPLE_AUDIENCE = "https://appleid.apple.com";

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/**
 * Sign in with Apple as appleid.apple.com serves it: discovery, an authorize page that (the user "signed in and
 * agreed") posts the answer to the redirect_uri with response_mode=form_post (code, state, and the `user` JSON of
 * a first authorization) when its `#apple-continue` button is clicked, a token endpoint that takes only an ES256
 * client secret signed with the client's key (client_secret_post) and answers an RS256 ID token of its own key
 * (email_verified the string "true"), and its JWKS. Served at http://localhost:<port>, both loopback addresses.
 */
export async function startAppleStandIn(opts: { publicKeyOfClient: KeyObject | CryptoKey; client: AppleClient }): Promise<AppleStandIn> {
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  const kid = "apple-stand-in-key-1";
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid, use: "sig", alg: "RS256" };
  const codes = new Map<string, { clientId: string; redirectUri: string; nonce: string | undefined; used: boolean }>();
  const v4 = http.createServer();
  const v6 = http.createServer();
  const stand: AppleStandIn = {
    origin: "",
    client: opts.client,
    user: { name: { firstName: "Appy", lastName: "Seed" }, email: "hidden@privaterelay.appleid.com" },
    authorizations: [],
    tokenRequests: [],
    idTokens: [],
    close: () => closeAll([v4, v6]),
  };
  const handler = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? "/", stand.origin);
    if (req.method === "GET" && url.pathname === "/.well-known/openid-configuration") {
      return json(res, 200, {
        issuer: stand.origin,
        authorization_endpoint: `${stand.origin}/auth/authorize`,
        token_endpoint: `${stand.origin}/auth/token`,
        revocation_endpoint: `${stand.origin}/auth/revoke`,
        jwks_uri: `${stand.origin}/auth/keys`,
        response_types_supported: ["code"],
        response_modes_supported: ["form_post"],
        subject_types_supported: ["pairwise"],
        id_token_signing_alg_values_supported: ["RS256"],
        scopes_supported: ["openid", "email", "name"],
        token_endpoint_auth_methods_supported: ["client_secret_post"],
        claims_supported: ["aud", "email", "email_verified", "exp", "iat", "is_private_email", "iss", "nonce", "nonce_supported", "real_user_status", "sub"],
      });
    }
    if (req.method === "GET" && url.pathname === "/auth/keys") return json(res, 200, { keys: [jwk] });
    if (req.method === "GET" && url.pathname === "/auth/authorize") {
      const r = received(req, url);
      stand.authorizations.push(r);
      const q = r.params;
      // Apple refuses scopes without form_post, and unknown clients, on a page of its own.
      if (q.client_id !== stand.client.clientId || !q.redirect_uri || q.response_type !== "code") {
        return res.writeHead(400, { "content-type": "text/html" }).end("<!doctype html><title>Apple</title><p>invalid_client or invalid_request</p>");
      }
      if (q.scope && q.response_mode !== "form_post") {
        return res
          .writeHead(400, { "content-type": "text/html" })
          .end("<!doctype html><title>Apple</title><p>invalid_request: response_mode must be form_post</p>");
      }
      const code = `c${randomBytes(16).toString("hex")}.0.apple`;
      codes.set(code, { clientId: q.client_id, redirectUri: q.redirect_uri, nonce: q.nonce, used: false });
      const fields: Record<string, string> = { code, ...(q.state !== undefined ? { state: q.state } : {}) };
      if ((q.scope ?? "").split(" ").some((s) => s === "name" || s === "email")) fields.user = JSON.stringify(stand.user);
      const inputs = Object.entries(fields)
        .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
        .join("");
      return res
        .writeHead(200, { "content-type": "text/html; charset=utf-8" })
        .end(
          `<!doctype html><html><head><title>Sign in with Apple</title></head><body><main><h1>Sign in with Apple</h1>` +
            `<form method="post" action="${escapeHtml(q.redirect_uri)}">${inputs}<button id="apple-continue" type="submit">Continue</button></form></main></body></html>`,
        );
    }
    if (req.method === "POST" && url.pathname === "/auth/token") {
      const form = new URLSearchParams(await bodyOf(req));
      const client = clientCredentials(req, form);
      const secret = await checkClientSecret(form.get("client_secret") ?? "", opts.publicKeyOfClient, stand.client);
      const code = codes.get(form.get("code") ?? "");
      let outcome = "ok";
      if (client.method !== "post" || client.id !== stand.client.clientId || !secret.verified) outcome = "invalid_client";
      else if (form.get("grant_type") !== "authorization_code") outcome = "unsupported_grant_type";
      else if (!code || code.used || code.clientId !== client.id || (form.has("redirect_uri") && form.get("redirect_uri") !== code.redirectUri)) {
        outcome = "invalid_grant";
      }
      stand.tokenRequests.push({ ...received(req, url, form), client, secret, outcome });
      if (outcome !== "ok") return json(res, 400, { error: outcome });
      code!.used = true;
      const now = Math.floor(Date.now() / 1000);
      const idToken = await new SignJWT({
        email: stand.user.email,
        email_verified: "true",
        is_private_email: "true",
        auth_time: now,
        nonce_supported: true,
        ...(code!.nonce !== undefined ? { nonce: code!.nonce } : {}),
      })
        .setProtectedHeader({ alg: "RS256", kid })
        .setIssuer(stand.origin)
        .setAudience(stand.client.clientId)
        .setSubject("apple-001")
        .setIssuedAt(now)
        .setExpirationTime(now + 600)
        .sign(privateKey);
      stand.idTokens.push(idToken);
      return json(res, 200, { access_token: token("a"), token_type: "Bearer", expires_in: 3600, refresh_token: token("r"), id_token: idToken });
    }
    return text(res, 404, "Not Found");
  };
  v4.on("request", handler);
  v6.on("request", handler);
  const port = await listen(v4);
  // Chromium may try ::1 for localhost first; the server's fetch may too.
  await listen(v6, "::1", port).catch(() => undefined);
  stand.origin = `http://localhost:${port}`;
  return stand;
}

/** Apple's check of a client secret: an ES256 JWT of the client's key (kid), iss the team, sub the client, Apple's audience. */
async function checkClientSecret(secret: string, key: KeyObject | CryptoKey, client: AppleClient): Promise<AppleSecretCheck> {
  let header: Record<string, unknown> | undefined;
  try {
    header = decodeProtectedHeader(secret) as Record<string, unknown>;
    const { payload } = await jwtVerify(secret, key, {
      algorithms: ["ES256"],
      issuer: client.teamId,
      subject: client.clientId,
      audience: APPLE_AUDIENCE,
      requiredClaims: ["iat", "exp"],
    });
    if (header.kid !== client.keyId) return { verified: false, error: `kid ${String(header.kid)} is not ${client.keyId}`, header, claims: payload };
    if (payload.exp! - payload.iat! > 3600) return { verified: false, error: "exp more than an hour after iat", header, claims: payload };
    return { verified: true, header, claims: payload };
  } catch (e) {
    return { verified: false, error: (e as Error).message, ...(header ? { header } : {}) };
  }
}
