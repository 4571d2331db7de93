import { createHash } from "node:crypto";
import type { FastifyRequest } from "fastify";
import { exchangeCode, recordIssuedByCode } from "../../command/auth-requests.js";
import type { IssuedByCode } from "../../events/index.js";
import { revokeAccessTokens, revokeRefreshToken } from "../../command/tokens.js";
import type { AuthMethod } from "../clients.js";
import type { OidcDeps, RequestScope } from "../context.js";
import { oauth } from "../errors.js";
import { issueUserTokens, type TokenResponse } from "../issue.js";
import { sha256 } from "../tokens.js";
import { authenticateApp } from "./grant.js";

/** Authorization code (RFC 6749 §4.1.3): single use, bound to the client and redirect URI, PKCE checked. */
export const grantType = "authorization_code";
export const parameters = ["code", "redirect_uri", "code_verifier"] as const;
export const clientAuthMethods: readonly AuthMethod[] = ["client_secret_basic", "client_secret_post", "none", "private_key_jwt"];

/** What the authorize endpoint stored with the request and the code needs again (`ValidatedRequest` of authorize.ts). */
type StoredRequest = { redirectUri: string; scopes: string[]; nonce?: string; codeChallenge?: string; amr?: string[] };

const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");

export async function handler(deps: OidcDeps, s: RequestScope, req: FastifyRequest, params: Record<string, string>): Promise<TokenResponse> {
  const client = await authenticateApp(deps, s, req, params, clientAuthMethods);
  if (!client.oidc!.grantTypes.includes("authorization_code")) throw oauth.unauthorizedClient("the client may not use the authorization_code grant");
  if (!params.code) throw oauth.invalidRequest("code is missing");
  const found = await deps.authRequests.byCodeHash(s.instance.id, sha256(params.code));
  if (!found) throw oauth.invalidGrant("the code is invalid or expired");
  const request = found.request as StoredRequest;
  // RFC 6749 §4.1.2: a code used twice revokes what its first use issued.
  const replay = async (issued: IssuedByCode | undefined) => {
    const creator = client.clientId;
    if (issued?.accessJti)
      await revokeAccessTokens(deps.es, { instanceId: s.instance.id, tokens: [{ jti: issued.accessJti, exp: issued.accessExp }], creator });
    if (issued?.refreshId) await revokeRefreshToken(deps.es, { instanceId: s.instance.id, id: issued.refreshId, creator });
    return oauth.invalidGrant("the code was already used; the tokens it gave are revoked");
  };
  if (found.state === "exchanged") throw await replay((found.issued ?? undefined) as IssuedByCode | undefined);
  // Checked before the code is used up, so that a wrong request cannot burn a valid code.
  if (found.clientId !== client.clientId) throw oauth.invalidGrant("the code was issued to another client");
  if (found.expiresAt.getTime() < deps.clock.now() || found.state !== "succeeded" || !found.userId) throw oauth.invalidGrant("the code is invalid or expired");
  if (params.redirect_uri !== request.redirectUri) throw oauth.invalidGrant("redirect_uri does not match the one of the authorization request");
  if (request.codeChallenge) {
    if (!params.code_verifier || !/^[A-Za-z0-9._~-]{43,128}$/.test(params.code_verifier)) throw oauth.invalidGrant("code_verifier is missing or malformed");
    if (s256(params.code_verifier) !== request.codeChallenge) throw oauth.invalidGrant("code_verifier does not match the code_challenge");
  } else if (params.code_verifier) {
    throw oauth.invalidGrant("code_verifier was sent but the authorization request had no code_challenge");
  }
  // The code stands for the browser session that signed in: once that session has ended
  // (logout), the code gives nothing, rather than tokens that would be inactive from the start.
  if (found.sessionId && !(await deps.sessions.active(found.sessionId))) throw oauth.invalidGrant("the session the code was issued for has ended");
  const exchange = await exchangeCode(deps.es, { instanceId: s.instance.id, id: found.id, creator: client.clientId });
  if (!exchange.exchanged) throw await replay(exchange.issued);
  const user = await deps.users.byId(s.instance.id, found.userId);
  if (user?.state !== "active") throw oauth.invalidGrant("the user can no longer sign in");
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
  // What the code gave is recorded with it, so that a second redemption can revoke it.
  await recordIssuedByCode(deps.es, {
    instanceId: s.instance.id,
    id: found.id,
    creator: client.clientId,
    access: { jti: issued.access.claims.jti, exp: issued.access.claims.exp },
    ...(issued.refresh ? { refresh: { resourceOwner: user.orgId, rotation: issued.refresh, grant: issued.grant } } : {}),
  });
  return issued.response;
}
