import type { FastifyRequest } from "fastify";
import { renewRefreshToken, revokeRefreshToken } from "../../command/tokens.js";
import type { AuthMethod } from "../clients.js";
import type { OidcDeps, RequestScope } from "../context.js";
import { oauth } from "../errors.js";
import { issueUserTokens, type TokenResponse } from "../issue.js";
import { parseScopes } from "../scopes.js";
import { sha256 } from "../tokens.js";
import { authenticateApp } from "./grant.js";

/** Refresh (RFC 6749 §6) with rotation: every use gives a new refresh token; an old one used again revokes the grant. */
export const grantType = "refresh_token";
export const parameters = ["refresh_token", "scope"] as const;
export const clientAuthMethods: readonly AuthMethod[] = ["client_secret_basic", "client_secret_post", "none", "private_key_jwt"];

export async function handler(deps: OidcDeps, s: RequestScope, req: FastifyRequest, params: Record<string, string>): Promise<TokenResponse> {
  const client = await authenticateApp(deps, s, req, params, clientAuthMethods);
  if (!client.oidc!.grantTypes.includes("refresh_token")) throw oauth.unauthorizedClient("the client may not use the refresh_token grant");
  if (!params.refresh_token) throw oauth.invalidRequest("refresh_token is missing");
  const hash = sha256(params.refresh_token);
  const row = await deps.tokenQueries.refreshByHash(s.instance.id, hash);
  if (!row) {
    // RFC 9700 §4.14.2: a replaced token used again revokes the grant.
    const replaced = await deps.tokenQueries.refreshReplacing(s.instance.id, hash);
    if (replaced && replaced.clientId === client.clientId)
      await revokeRefreshToken(deps.es, { instanceId: s.instance.id, id: replaced.id, creator: client.clientId });
    throw oauth.invalidGrant("the refresh token is invalid, expired or was already used");
  }
  if (row.revoked) throw oauth.invalidGrant("the refresh token is invalid, expired or was already used");
  if (row.clientId !== client.clientId) throw oauth.invalidGrant("the refresh token was issued to another client");
  const now = Date.now();
  if (row.expiresAt.getTime() < now || row.idleExpiresAt.getTime() < now) throw oauth.invalidGrant("the refresh token expired");
  if (row.sessionId && !(await deps.sessions.active(row.sessionId))) throw oauth.invalidGrant("the session of the refresh token has ended");
  const scopes = params.scope ? parseScopes(params.scope) : row.scopes;
  if (scopes.some((x) => !row.scopes.includes(x))) throw oauth.invalidScope("the scope may only narrow what was granted");
  const user = await deps.users.byId(s.instance.id, row.userId);
  if (user?.state !== "active") throw oauth.invalidGrant("the user can no longer sign in");
  const issued = await issueUserTokens(deps, s, { client, user, scopes, sessionId: row.sessionId, authTime: row.authTime, amr: row.amr, withRefresh: true });
  const renewed = await renewRefreshToken(deps.es, {
    instanceId: s.instance.id,
    id: row.id,
    creator: client.clientId,
    resourceOwner: user.orgId,
    presentedHash: hash,
    rotation: issued.refresh!,
  });
  if (!renewed) throw oauth.invalidGrant("the refresh token was already used");
  return issued.response;
}
