import type { FastifyRequest } from "fastify";
import { revokeAccessTokens, revokeRefreshToken } from "../command/tokens.js";
import { credentialsOf, type AuthMethod } from "./clients.js";
import { paths, type OidcDeps, type RequestScope } from "./context.js";
import { oauth } from "./errors.js";
import { noteUnknownToken } from "./failures.js";
import { sha256 } from "./tokens.js";

/** Every method: public clients revoke their own tokens too (RFC 7009 §2.1). */
export const revocationAuthMethods: readonly AuthMethod[] = ["none", "client_secret_basic", "client_secret_post", "private_key_jwt"];

/**
 * Revocation (RFC 7009): an access token alone, or a refresh token with its access token. Tokens that are
 * unknown, invalid or already revoked succeed too; only a token of another client is refused.
 */
export async function revoke(deps: OidcDeps, s: RequestScope, req: FastifyRequest, params: Record<string, string>) {
  // Applications revoke their users' tokens; machine users (client credentials) their own.
  const client = await deps.clients.authenticate(
    s.instance.id,
    s.issuer,
    `${s.issuer}${paths.revoke}`,
    credentialsOf(req, params),
    revocationAuthMethods,
    async (id) => (await deps.clients.application(s.instance.id, id)) ?? (await deps.clients.machine(s.instance.id, { username: id })),
  );
  if (!params.token) throw oauth.invalidRequest("token is missing");
  if (params.token_type_hint !== "access_token") {
    const refresh = await deps.tokenQueries.refreshByHash(s.instance.id, sha256(params.token));
    if (refresh) {
      if (refresh.clientId !== client.clientId) throw oauth.invalidClient("the token was not issued to this client");
      await revokeRefreshToken(deps.es, { instanceId: s.instance.id, id: refresh.id, creator: client.clientId });
      return;
    }
  }
  const claims = await deps.tokens.verifyAccess(params.token, s.instance.id);
  if (!claims) return noteUnknownToken(req, deps.tokens, params.token);
  if (claims.client_id !== client.clientId) throw oauth.invalidClient("the token was not issued to this client");
  await revokeAccessTokens(deps.es, { instanceId: s.instance.id, tokens: [{ jti: claims.jti, exp: claims.exp }], creator: client.clientId });
}
