import { createHash } from "node:crypto";
import type { FastifyRequest } from "fastify";
import type { User } from "../../gen/prisma/client.js";
import { changeAggregate } from "../command/aggregate.js";
import {
  authRequestCodeExchanged,
  authRequestTokensIssued,
  refreshTokenAdded,
  refreshTokenRenewed,
  refreshTokenRevoked,
  type IssuedByCode,
  type RefreshGrant,
  type RefreshRotation,
} from "../command/events.js";
import { newId } from "../ids.js";
import { userClaims, roleClaims } from "./claims.js";
import { checkAssertionTimes, credentialsOf, type OAuthClient } from "./clients.js";
import { paths, type OidcDeps, type RequestScope } from "./context.js";
import { oauth } from "./errors.js";
import { decodeJwt, verifyRs256 } from "./jwt.js";
import { API_AUDIENCE, audienceOf, parseScopes } from "./scopes.js";
import { randomToken, sha256, Tokens, type AccessClaims } from "./tokens.js";

export interface TokenResponse {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  scope: string;
  id_token?: string;
  refresh_token?: string;
}

type Grant = (deps: OidcDeps, scope: RequestScope, req: FastifyRequest, params: Record<string, string>) => Promise<TokenResponse>;

const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/**
 * The grants of the token endpoint. Token exchange (RFC 8693) is not among them yet: a later issue adds it
 * here, behind the `oidc_token_exchange` flag; until then it is unsupported_grant_type.
 */
export const grants: Record<string, Grant> = {
  client_credentials: clientCredentials,
  [JWT_BEARER]: jwtProfile,
  authorization_code: authorizationCode,
  refresh_token: refreshToken,
};

export const grantTypesSupported = ["authorization_code", "implicit", "refresh_token", "client_credentials", JWT_BEARER];

/** The access token, with the claims a `preaccesstoken` function execution adds (it may not change the reserved ones). */
async function issueAccess(
  deps: OidcDeps,
  s: RequestScope,
  type: "opaque" | "jwt",
  base: Omit<AccessClaims, "iat" | "exp" | "jti" | "urn:svc:iam:instance:id" | "urn:svc:iam:user:resourceowner:id">,
  orgId: string,
) {
  const claims = { ...base, "urn:svc:iam:instance:id": s.instance.id, "urn:svc:iam:user:resourceowner:id": orgId };
  const extra = await deps.functions.run(s.instance.id, "preaccesstoken", { userID: base.sub, clientID: base.client_id, scopes: base.scope.split(" ") }, "claims", {} as Record<string, unknown>, (json) =>
    json && typeof json === "object" && !Array.isArray(json) ? (json as Record<string, unknown>) : {},
  );
  const reserved = new Set([...Object.keys(claims), "iat", "exp", "jti", "nbf"]);
  const added = Object.fromEntries(Object.entries(extra).filter(([k]) => !reserved.has(k)));
  return deps.tokens.accessToken(type, { ...added, ...claims, instanceId: s.instance.id } as never);
}

function response(access: { token: string; claims: AccessClaims }, extra: Partial<TokenResponse> = {}): TokenResponse {
  return {
    access_token: access.token,
    token_type: "Bearer",
    expires_in: access.claims.exp - access.claims.iat,
    scope: access.claims.scope,
    ...extra,
  };
}

/** Client credentials of a machine user (RFC 6749 §4.4): its username and client secret. */
async function clientCredentials(deps: OidcDeps, s: RequestScope, req: FastifyRequest, params: Record<string, string>): Promise<TokenResponse> {
  const creds = credentialsOf(req, params);
  const client = await deps.clients.authenticate(s.instance.id, s.issuer, `${s.issuer}${paths.token}`, creds, ["client_secret_basic", "client_secret_post"], (id) =>
    deps.clients.machine(s.instance.id, { username: id }),
  );
  const scopes = parseScopes(params.scope).filter((x) => x !== "offline_access" && x !== "openid");
  const access = await issueAccess(deps, s, client.accessTokenType, { iss: s.issuer, sub: client.id, client_id: client.clientId, aud: audienceOf(scopes, []), scope: scopes.join(" "), amr: ["pwd"] }, client.orgId);
  return response(access);
}

/** JWT profile (RFC 7523 §2.1) with a machine user's key: iss = sub = the user's ID, aud the issuer. */
async function jwtProfile(deps: OidcDeps, s: RequestScope, _req: FastifyRequest, params: Record<string, string>): Promise<TokenResponse> {
  if (!params.assertion) throw oauth.invalidRequest("assertion is missing");
  const jwt = decodeJwt(params.assertion);
  if (!jwt) throw oauth.invalidGrant("assertion is not a JWT");
  const p = jwt.payload;
  if (typeof p.iss !== "string" || p.iss !== p.sub) throw oauth.invalidGrant("assertion: iss and sub must both be the user ID");
  const client = await deps.clients.machine(s.instance.id, { userId: p.sub });
  if (!client || !client.active) throw oauth.invalidGrant("assertion: unknown or inactive user");
  const ok = verifyRs256(jwt, await deps.clients.verificationKeys({ userId: client.id }));
  if (!ok) throw oauth.invalidGrant("assertion: the signature does not verify with the user's keys");
  checkAssertionTimes(p, "assertion", (d) => oauth.invalidGrant(d));
  const aud = Array.isArray(p.aud) ? p.aud : [p.aud];
  if (!aud.some((a) => a === s.issuer || a === `${s.issuer}${paths.token}`)) throw oauth.invalidGrant("assertion: aud must contain the issuer");
  await deps.replay.use(`jwt-profile:${client.id}:${String(p.jti ?? "")}`, Number(p.exp), () => oauth.invalidGrant("assertion: jti missing or already used"));
  const scopes = parseScopes(params.scope).filter((x) => x !== "offline_access");
  const access = await issueAccess(deps, s, client.accessTokenType, { iss: s.issuer, sub: client.id, client_id: client.id, aud: audienceOf(scopes, []), scope: scopes.join(" "), amr: ["private_key_jwt"] }, client.orgId);
  if (!scopes.includes("openid")) return response(access);
  const user = (await deps.tokens.user(client.id))!;
  const idToken = await deps.tokens.idToken(s.instance.id, { iss: s.issuer, sub: client.id, aud: [client.id], azp: client.id, at_hash: Tokens.halfHash(access.token), ...userClaims(user, scopes) });
  return response(access, { id_token: idToken });
}

/** Authenticates an application at the token endpoint with the method it registered. */
export async function authenticateApp(deps: OidcDeps, s: RequestScope, req: FastifyRequest, params: Record<string, string>): Promise<OAuthClient> {
  const client = await deps.clients.authenticate(s.instance.id, s.issuer, `${s.issuer}${paths.token}`, credentialsOf(req, params), [
    "client_secret_basic",
    "client_secret_post",
    "none",
    "private_key_jwt",
  ]);
  if (!client.oidc) throw oauth.unauthorizedClient("API applications cannot get tokens; they introspect them");
  return client;
}

/** The tokens for a user; with a refresh token, what its events record: the rotation and the grant. */
type UserTokens = { response: TokenResponse; access: { token: string; claims: AccessClaims } } & (
  | { refresh?: undefined; grant?: undefined }
  | { refresh: RefreshRotation; grant: RefreshGrant }
);

/** Access, ID and (with offline_access) refresh token for a signed-in user, as the code and refresh grants issue them. */
export async function issueUserTokens(
  deps: OidcDeps,
  s: RequestScope,
  a: { client: OAuthClient; user: User; scopes: string[]; sessionId: string | null; authTime: Date; amr: string[]; nonce?: string; withRefresh: boolean },
): Promise<UserTokens> {
  const { client, user, scopes } = a;
  const aud = audienceOf(scopes, [client.clientId, client.projectId!]);
  const project = await deps.cache.get(`oidc-project:${client.projectId}`, () => deps.db.prisma.project.findUnique({ where: { id: client.projectId! } }));
  const roles = await roleClaims(deps.db, user.id, client.projectId, scopes, !!project?.projectRoleAssertion && !!client.oidc?.accessTokenRoleAssertion);
  const authTime = Math.floor(a.authTime.getTime() / 1000);
  const access = await issueAccess(
    deps,
    s,
    client.accessTokenType,
    { iss: s.issuer, sub: user.id, client_id: client.clientId, aud, scope: scopes.join(" "), auth_time: authTime, amr: a.amr, ...(a.sessionId ? { sid: a.sessionId } : {}), ...roles },
    user.orgId,
  );
  const out: TokenResponse = response(access);
  if (scopes.includes("openid")) {
    // Scope claims go into the ID token only when the client asked for it (or gets no access token, implicit).
    const profile = client.oidc?.idTokenUserinfoAssertion ? userClaims(user, scopes) : {};
    const idRoles = project?.projectRoleAssertion && client.oidc?.idTokenRoleAssertion ? roles : {};
    out.id_token = await deps.tokens.idToken(s.instance.id, {
      iss: s.issuer,
      sub: user.id,
      aud: [client.clientId, ...aud.filter((x) => x !== client.clientId && x !== API_AUDIENCE)],
      azp: client.clientId,
      auth_time: authTime,
      amr: a.amr,
      at_hash: Tokens.halfHash(access.token),
      ...(a.nonce ? { nonce: a.nonce } : {}),
      ...(a.sessionId ? { sid: a.sessionId } : {}),
      ...profile,
      ...idRoles,
    });
  }
  if (!a.withRefresh) return { response: out, access };
  const token = randomToken();
  out.refresh_token = token;
  const refresh: RefreshRotation = {
    tokenHash: sha256(token),
    accessJti: access.claims.jti,
    accessExpires: new Date(access.claims.exp * 1000).toISOString(),
    idleExpiresAt: new Date(Date.now() + deps.tokens.lifetimes.refreshIdleMs).toISOString(),
  };
  const grant: RefreshGrant = {
    clientId: client.clientId,
    applicationId: client.id,
    userId: user.id,
    scopes,
    audience: aud,
    sessionId: a.sessionId,
    authTime: a.authTime.toISOString(),
    amr: a.amr,
    expiresAt: new Date(Date.now() + deps.tokens.lifetimes.refreshAbsoluteMs).toISOString(),
  };
  return { response: out, access, refresh, grant };
}

const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");

/** Authorization code (RFC 6749 §4.1.3): single use, bound to the client and redirect URI, PKCE checked. */
async function authorizationCode(deps: OidcDeps, s: RequestScope, req: FastifyRequest, params: Record<string, string>): Promise<TokenResponse> {
  const client = await authenticateApp(deps, s, req, params);
  if (!client.oidc!.grantTypes.includes("authorization_code")) throw oauth.unauthorizedClient("the client may not use the authorization_code grant");
  if (!params.code) throw oauth.invalidRequest("code is missing");
  const found = await deps.db.prisma.authRequest.findUnique({ where: { codeHash: sha256(params.code) } });
  if (!found || found.instanceId !== s.instance.id) throw oauth.invalidGrant("the code is invalid or expired");
  const request = found.request as { redirectUri: string; scopes: string[]; nonce?: string; codeChallenge?: string; amr?: string[] };
  let replayed: IssuedByCode | undefined;
  const replay = async () => {
    // RFC 6749 §4.1.2: a code used twice revokes what its first use issued.
    if (replayed?.accessJti) await deps.tokens.revokeAccess(s.instance.id, [{ jti: replayed.accessJti, exp: replayed.accessExp }], client.clientId);
    if (replayed?.refreshId) await revokeRefresh(deps, s.instance.id, replayed.refreshId, client.clientId);
    return oauth.invalidGrant("the code was already used; the tokens it gave are revoked");
  };
  if (found.state === "exchanged") {
    replayed = (found.issued ?? undefined) as typeof replayed;
    throw await replay();
  }
  // Checked before the code is used up, so that a wrong request cannot burn a valid code.
  if (found.clientId !== client.clientId) throw oauth.invalidGrant("the code was issued to another client");
  if (found.expiresAt.getTime() < Date.now() || found.state !== "succeeded" || !found.userId) throw oauth.invalidGrant("the code is invalid or expired");
  if (params.redirect_uri !== request.redirectUri) throw oauth.invalidGrant("redirect_uri does not match the one of the authorization request");
  if (request.codeChallenge) {
    if (!params.code_verifier || !/^[A-Za-z0-9._~-]{43,128}$/.test(params.code_verifier)) throw oauth.invalidGrant("code_verifier is missing or malformed");
    if (s256(params.code_verifier) !== request.codeChallenge) throw oauth.invalidGrant("code_verifier does not match the code_challenge");
  } else if (params.code_verifier) {
    throw oauth.invalidGrant("code_verifier was sent but the authorization request had no code_challenge");
  }
  // The code is used up under the request's lock: of two redemptions exactly one wins.
  let lost = false;
  await changeAggregate(deps.es, {
    aggregateType: "auth_request",
    instanceId: s.instance.id,
    id: found.id,
    creator: client.clientId,
    load: (w) => w.tx.authRequest.findUnique({ where: { id: found.id } }).then((r) => (r ? { ...r, sequence: 0, changeDate: r.createdAt } : null)),
    notFound: () => oauth.invalidGrant("the code is invalid or expired"),
    ownerOf: () => s.instance.id,
    decide: (row) => {
      if (row.state !== "succeeded") {
        lost = true;
        replayed = (row.issued ?? undefined) as typeof replayed;
        return [];
      }
      return [authRequestCodeExchanged.change()];
    },
  });
  if (lost) throw await replay();
  const user = await deps.db.prisma.user.findUnique({ where: { id: found.userId! } });
  if (!user || user.state !== "active") throw oauth.invalidGrant("the user can no longer sign in");
  const withRefresh = request.scopes.includes("offline_access") && client.oidc!.grantTypes.includes("refresh_token");
  const issued = await issueUserTokens(deps, s, {
    client,
    user,
    scopes: request.scopes,
    sessionId: found.sessionId,
    authTime: found.authTime ?? found.createdAt,
    amr: request.amr ?? ["pwd"],
    ...(request.nonce ? { nonce: request.nonce } : {}),
    withRefresh,
  });
  const refreshAdded = issued.refresh ? refreshTokenAdded.event({ aggregateId: newId(), resourceOwner: user.orgId }, { ...issued.refresh, ...issued.grant }) : undefined;
  const refreshId = refreshAdded?.aggregateId;
  // What the code gave is recorded with it, so that a second redemption can revoke it.
  await deps.es.execute((w) =>
    w.push(s.instance.id, client.clientId, [
      ...(refreshAdded ? [refreshAdded] : []),
      authRequestTokensIssued.event(
        { aggregateId: found.id, resourceOwner: s.instance.id },
        { issued: { accessJti: issued.access.claims.jti, accessExp: issued.access.claims.exp, ...(refreshId ? { refreshId } : {}) } },
      ),
    ]),
  );
  return issued.response;
}

export async function revokeRefresh(deps: OidcDeps, instanceId: string, id: string, creator: string) {
  const row = await deps.db.prisma.refreshToken.findUnique({ where: { id } });
  if (!row || row.revoked) return;
  await deps.es.execute((w) => w.push(instanceId, creator, [refreshTokenRevoked.event({ aggregateId: id, resourceOwner: instanceId })]));
  await deps.tokens.revokeAccess(instanceId, [{ jti: row.accessJti, exp: Math.floor(row.accessExpires.getTime() / 1000) }], creator);
}

/** Refresh (RFC 6749 §6) with rotation: every use gives a new refresh token; an old one used again revokes the grant. */
async function refreshToken(deps: OidcDeps, s: RequestScope, req: FastifyRequest, params: Record<string, string>): Promise<TokenResponse> {
  const client = await authenticateApp(deps, s, req, params);
  if (!client.oidc!.grantTypes.includes("refresh_token")) throw oauth.unauthorizedClient("the client may not use the refresh_token grant");
  if (!params.refresh_token) throw oauth.invalidRequest("refresh_token is missing");
  const hash = sha256(params.refresh_token);
  const row = await deps.db.prisma.refreshToken.findUnique({ where: { tokenHash: hash } });
  if (!row) {
    const replaced = await deps.db.prisma.refreshToken.findFirst({ where: { previousHashes: { has: hash } } });
    if (replaced && replaced.clientId === client.clientId) await revokeRefresh(deps, s.instance.id, replaced.id, client.clientId);
    throw oauth.invalidGrant("the refresh token is invalid, expired or was already used");
  }
  if (row.instanceId !== s.instance.id || row.revoked) throw oauth.invalidGrant("the refresh token is invalid, expired or was already used");
  if (row.clientId !== client.clientId) throw oauth.invalidGrant("the refresh token was issued to another client");
  const now = Date.now();
  if (row.expiresAt.getTime() < now || row.idleExpiresAt.getTime() < now) throw oauth.invalidGrant("the refresh token expired");
  if (row.sessionId && !(await deps.tokens.sessionActive(row.sessionId))) throw oauth.invalidGrant("the session of the refresh token has ended");
  const scopes = params.scope ? parseScopes(params.scope) : row.scopes;
  if (scopes.some((x) => !row.scopes.includes(x))) throw oauth.invalidScope("the scope may only narrow what was granted");
  const user = await deps.db.prisma.user.findUnique({ where: { id: row.userId } });
  if (!user || user.state !== "active") throw oauth.invalidGrant("the user can no longer sign in");
  const issued = await issueUserTokens(deps, s, { client, user, scopes, sessionId: row.sessionId, authTime: row.authTime, amr: row.amr, withRefresh: true });
  // Rotation under the token's lock: of two uses of one refresh token only the first gets new tokens.
  await changeAggregate(deps.es, {
    aggregateType: "refresh_token",
    instanceId: s.instance.id,
    id: row.id,
    creator: client.clientId,
    load: (w) => w.tx.refreshToken.findUnique({ where: { id: row.id } }).then((r) => (r ? { ...r, sequence: 0, changeDate: r.createdAt } : null)),
    notFound: () => oauth.invalidGrant("the refresh token is invalid"),
    ownerOf: () => user.orgId,
    decide: (current) => {
      if (current.tokenHash !== hash || current.revoked) throw oauth.invalidGrant("the refresh token was already used");
      return [refreshTokenRenewed.change(issued.refresh!)];
    },
  });
  return issued.response;
}
