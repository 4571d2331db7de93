import type { FastifyRequest } from "fastify";
import { extraScopeClaims, userClaims } from "./claims.js";
import type { OidcDeps, RequestScope } from "./context.js";
import { OAuthError, oauth } from "./errors.js";
import { noteUnknownToken } from "./failures.js";

/** The bearer token of a request: the Authorization header, or (POST form) access_token. Both: invalid_request. */
function bearerOf(req: FastifyRequest, params: Record<string, string>): string | undefined {
  const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "");
  if (m && params.access_token) throw oauth.invalidRequest("the token was sent twice");
  return m?.[1] ?? params.access_token;
}

/** Userinfo (OIDC Core §5.3), GET and POST; a bad or expired token is 401 with WWW-Authenticate. */
export async function userinfo(deps: OidcDeps, s: RequestScope, req: FastifyRequest, params: Record<string, string>) {
  const token = bearerOf(req, params);
  const claims = token ? await deps.tokens.verifyAccess(token, s.instance.id) : undefined;
  if (!claims) {
    if (token) noteUnknownToken(req, deps.tokens, token);
    throw oauth.invalidToken("the access token is invalid or expired");
  }
  const scopes = claims.scope.split(" ");
  if (!scopes.includes("openid")) throw new OAuthError("insufficient_scope", "the token was not issued with the openid scope", 403);
  const user = await deps.users.tokenSubject(claims.sub);
  if (!user) throw oauth.invalidToken("the user of the token no longer exists");
  const base = { sub: user.id, ...userClaims(user, scopes), ...(await extraScopeClaims(deps, user, scopes)) };
  const roleKeys = Object.keys(claims).filter((k) => k.startsWith("urn:svc:iam:org:project:"));
  const roles = Object.fromEntries(roleKeys.map((k) => [k, (claims as unknown as Record<string, unknown>)[k]]));
  // A `preuserinfo` function execution may add claims; sub and the standard claims stay as they are.
  const extra = await deps.functions.run(
    s.instance.id,
    "preuserinfo",
    { userID: user.id, clientID: claims.client_id, scopes, ...(claims.act ? { act: claims.act } : {}) },
    "claims",
    {} as Record<string, unknown>,
    (json) => (json && typeof json === "object" && !Array.isArray(json) ? (json as Record<string, unknown>) : {}),
  );
  return { ...extra, ...roles, ...base };
}
