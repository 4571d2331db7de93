import type { FastifyRequest } from "fastify";
import { credentialsOf, type AuthMethod } from "../clients.js";
import { paths, type OidcDeps, type RequestScope } from "../context.js";
import { issueAccess, tokenResponse, type TokenResponse } from "../issue.js";
import { audienceOf, parseScopes } from "../scopes.js";

/** Client credentials of a machine user (RFC 6749 §4.4): its username and client secret. No refresh token. */
export const grantType = "client_credentials";
export const parameters = ["scope"] as const;
export const clientAuthMethods: readonly AuthMethod[] = ["client_secret_basic", "client_secret_post"];

export async function handler(deps: OidcDeps, s: RequestScope, req: FastifyRequest, params: Record<string, string>): Promise<TokenResponse> {
  const client = await deps.clients.authenticate(s.instance.id, s.issuer, `${s.issuer}${paths.token}`, credentialsOf(req, params), clientAuthMethods, (id) =>
    deps.clients.machine(s.instance.id, { username: id }),
  );
  const scopes = parseScopes(params.scope).filter((x) => x !== "offline_access" && x !== "openid");
  const access = await issueAccess(
    deps,
    s,
    client.accessTokenType,
    { iss: s.issuer, sub: client.id, client_id: client.clientId, aud: audienceOf(scopes, []), scope: scopes.join(" "), amr: ["pwd"] },
    client.orgId,
  );
  return tokenResponse(access);
}
