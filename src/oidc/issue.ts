import { acrOf } from "./acr.js";
import type { User } from "../../gen/prisma/client.js";
import type { RefreshGrant, RefreshRotation } from "../events/index.js";
import { extraScopeClaims, roleClaims, userClaims } from "./claims.js";
import type { OAuthClient } from "./clients.js";
import type { OidcDeps, RequestScope } from "./context.js";
import { API_AUDIENCE, audienceOf } from "./scopes.js";
import { randomToken, sha256, Tokens, type AccessClaims } from "./tokens.js";

/** The token endpoint's successful response (RFC 6749 §5.1; RFC 8693 §2.2.1 for token exchange). */
export interface TokenResponse {
  access_token: string;
  /** `N_A` when a token exchange answers with a token that is no access token (an ID token). */
  token_type: "Bearer" | "N_A";
  /** Token exchange: the type of the token in `access_token`. */
  issued_token_type?: string;
  expires_in: number;
  scope: string;
  id_token?: string;
  refresh_token?: string;
}

export type IssuedAccess = { token: string; claims: AccessClaims };

/** The access token, with the claims a `preaccesstoken` function execution adds (it may not change the reserved ones). */
export async function issueAccess(
  deps: OidcDeps,
  s: RequestScope,
  type: "opaque" | "jwt",
  base: Omit<AccessClaims, "iat" | "exp" | "jti" | "urn:svc:iam:instance:id" | "urn:svc:iam:user:resourceowner:id">,
  orgId: string,
): Promise<IssuedAccess> {
  const claims = Object.assign({}, base) as Omit<AccessClaims, "iat" | "exp" | "jti">;
  claims["urn:svc:iam:instance:id"] = s.instance.id;
  claims["urn:svc:iam:user:resourceowner:id"] = orgId;
  const extra = await deps.functions.run(
    s.instance.id,
    "preaccesstoken",
    // The actor of a token exchange too (RFC 8693 act), so that a function can tell who acts for the user.
    { userID: base.sub, clientID: base.client_id, scopes: base.scope.split(" "), ...(base.act ? { act: base.act } : {}) },
    "claims",
    {} as Record<string, unknown>,
    (json) => (json && typeof json === "object" && !Array.isArray(json) ? (json as Record<string, unknown>) : {}),
  );
  const added: Record<string, unknown> = {};
  for (const k of Object.keys(extra)) if (!(k in claims) && !RESERVED.has(k)) added[k] = extra[k];
  return deps.tokens.accessToken(type, s.instance.id, claims, added);
}

/**
 * Claims a `preaccesstoken` function may not set, beside those the token already has: every claim this server
 * gives a meaning, also where this grant leaves it out (an `amr` of ["mfa"] added to a client's token would read as
 * a second factor in introspection; an `act` as a delegation that never happened).
 */
const RESERVED = new Set<string>([
  "iss",
  "sub",
  "client_id",
  "aud",
  "scope",
  "iat",
  "exp",
  "nbf",
  "jti",
  "auth_time",
  "sid",
  "amr",
  "acr",
  "act",
  "urn:svc:iam:instance:id",
  "urn:svc:iam:user:resourceowner:id",
]);

export function tokenResponse(access: IssuedAccess, extra: Partial<TokenResponse> = {}): TokenResponse {
  return {
    access_token: access.token,
    token_type: "Bearer",
    expires_in: access.claims.exp - access.claims.iat,
    scope: access.claims.scope,
    ...extra,
  };
}

/** The tokens for a user; with a refresh token, what its events record: the rotation and the grant. */
export type UserTokens = { response: TokenResponse; access: IssuedAccess } & (
  | { refresh?: undefined; grant?: undefined }
  | { refresh: RefreshRotation; grant: RefreshGrant }
);

/**
 * Access, ID and (with offline_access) refresh token for a signed-in user, as the code and refresh grants and
 * the implicit flow issue them. Nothing is stored here: the caller records the refresh token with its grant.
 */
export async function issueUserTokens(
  deps: OidcDeps,
  s: RequestScope,
  a: { client: OAuthClient; user: User; scopes: string[]; sessionId: string | null; authTime: Date; amr: string[]; nonce?: string; withRefresh: boolean },
): Promise<UserTokens> {
  const { client, user, scopes } = a;
  const aud = audienceOf(scopes, [client.clientId, client.projectId!]);
  const projectAsserts = await deps.projects.assertsRoles(client.projectId!);
  const roles = await roleClaims(deps.userGrants, user.id, client.projectId, scopes, projectAsserts && !!client.oidc?.accessTokenRoleAssertion);
  const authTime = Math.floor(a.authTime.getTime() / 1000);
  const access = await issueAccess(
    deps,
    s,
    client.accessTokenType,
    {
      iss: s.issuer,
      sub: user.id,
      client_id: client.clientId,
      aud,
      scope: scopes.join(" "),
      auth_time: authTime,
      amr: a.amr,
      ...(a.sessionId ? { sid: a.sessionId } : {}),
      ...roles,
    },
    user.orgId,
  );
  const out: TokenResponse = tokenResponse(access);
  if (scopes.includes("openid")) {
    // Scope claims go into the ID token only when the client asked for it (or gets no access token, implicit).
    const profile = client.oidc?.idTokenUserinfoAssertion ? { ...userClaims(user, scopes), ...(await extraScopeClaims(deps, user, scopes)) } : {};
    const idRoles = projectAsserts && client.oidc?.idTokenRoleAssertion ? roles : {};
    out.id_token = await deps.tokens.idToken(s.instance.id, {
      iss: s.issuer,
      sub: user.id,
      aud: [client.clientId, ...aud.filter((x) => x !== client.clientId && x !== API_AUDIENCE)],
      azp: client.clientId,
      auth_time: authTime,
      amr: a.amr,
      acr: acrOf(a.amr),
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
    idleExpiresAt: new Date(deps.clock.now() + deps.tokens.lifetimes.refreshIdleMs).toISOString(),
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
    expiresAt: new Date(deps.clock.now() + deps.tokens.lifetimes.refreshAbsoluteMs).toISOString(),
  };
  return { response: out, access, refresh, grant };
}
