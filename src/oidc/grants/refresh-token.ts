import type { FastifyRequest } from "fastify";
import { useSession } from "../../command/sessions.js";
import { renewRefreshToken, revokeRefreshToken } from "../../command/tokens.js";
import { graceAnswer, type RefreshTokenRow } from "../../query/tokens.js";
import type { AuthMethod } from "../clients.js";
import type { OidcDeps, RequestScope } from "../context.js";
import { oauth } from "../errors.js";
import { issueUserTokens, type TokenResponse } from "../issue.js";
import { parseScopes } from "../scopes.js";
import { sha256 } from "../tokens.js";
import { authenticateApp } from "./grant.js";

/**
 * Refresh (RFC 6749 §6) with rotation: every use gives a new refresh token; an old one used again revokes the
 * grant (RFC 9700 §4.14.2), except as a retry within the grace window (`SVC_OIDC_REFRESH_TOKEN_GRACE`), which
 * gets the same new pair as the first use.
 */
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
    const replaced = await deps.tokenQueries.refreshReplacing(s.instance.id, hash);
    if (replaced && replaced.clientId === client.clientId) {
      // A retry of the refresh that replaced it, within the grace window: that refresh's answer again.
      const sealed = graceAnswer(await deps.tokenQueries.refreshGrace(replaced.id), replaced, hash, deps.clock.now());
      if (sealed) {
        await usable(deps, s, replaced);
        scopesOf(params, replaced);
        return answerOf(deps, sealed);
      }
      // RFC 9700 §4.14.2: otherwise a replaced token used again revokes the grant.
      await revokeRefreshToken(deps.es, { instanceId: s.instance.id, id: replaced.id, creator: client.clientId });
    }
    throw oauth.invalidGrant("the refresh token is invalid, expired or was already used");
  }
  if (row.revoked) throw oauth.invalidGrant("the refresh token is invalid, expired or was already used");
  if (row.clientId !== client.clientId) throw oauth.invalidGrant("the refresh token was issued to another client");
  const { sessionId, user } = await usable(deps, s, row);
  const scopes = scopesOf(params, row);
  const issued = await issueUserTokens(deps, s, { client, user, scopes, sessionId, authTime: row.authTime, amr: row.amr, withRefresh: true });
  const graceMs = deps.tokens.lifetimes.refreshGraceMs;
  const renewal = await renewRefreshToken(deps.es, {
    instanceId: s.instance.id,
    id: row.id,
    creator: client.clientId,
    resourceOwner: user.orgId,
    presentedHash: hash,
    rotation: issued.refresh!,
    ...(graceMs > 0 ? { grace: { response: deps.box.seal(JSON.stringify(issued.response)), expiresAt: new Date(deps.clock.now() + graceMs) } } : {}),
  });
  if (renewal.renewed) return issued.response;
  // A concurrent use of the same token renewed it first: within the window its answer is this one's too.
  if (renewal.replay) return answerOf(deps, renewal.replay);
  throw oauth.invalidGrant("the refresh token was already used");
}

/**
 * Whether the grant may still give tokens: not expired, its user able to act (`usableUser`: active, in an active
 * organisation), and its session alive (not ended by logout or its lifetimes) unless
 * it is an offline grant. OIDC Core §11: `offline_access` asks for access while the user is not signed in, so an
 * offline refresh token outlives the logout of the session it was issued in; any other refresh token is bound
 * to that session and ends with it. The tokens it gives carry the session (`sid`, so that a logout ends them
 * like every token of the session) only while the session lasts.
 */
async function usable(deps: OidcDeps, s: RequestScope, row: RefreshTokenRow) {
  const now = deps.clock.now();
  if (row.expiresAt.getTime() < now || row.idleExpiresAt.getTime() < now) throw oauth.invalidGrant("the refresh token expired");
  // A refresh is a use of its session (its idle lifetime starts again).
  const sessionActive = row.sessionId ? await useSession(deps.es, deps.sessions, row.sessionId) : false;
  if (row.sessionId && !sessionActive && !row.scopes.includes("offline_access")) throw oauth.invalidGrant("the session of the refresh token has ended");
  const user = (await deps.tenancy.usableUser(row.userId)) ? await deps.users.byId(s.instance.id, row.userId) : null;
  if (!user) throw oauth.invalidGrant("the user can no longer sign in");
  return { user, sessionId: sessionActive ? row.sessionId : null };
}

/** The scope asked for (RFC 6749 §6): at most what was granted, by default all of it. */
function scopesOf(params: Record<string, string>, row: RefreshTokenRow): string[] {
  const scopes = params.scope ? parseScopes(params.scope) : row.scopes;
  if (scopes.some((x) => !row.scopes.includes(x))) throw oauth.invalidScope("the scope may only narrow what was granted");
  return scopes;
}

const answerOf = (deps: OidcDeps, sealed: string) => JSON.parse(deps.box.open(sealed)) as TokenResponse;
