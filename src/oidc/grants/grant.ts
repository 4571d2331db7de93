import type { FastifyRequest } from "fastify";
import { credentialsOf, type AuthMethod, type OAuthClient } from "../clients.js";
import { paths, type OidcDeps, type RequestScope } from "../context.js";
import { oauth } from "../errors.js";
import type { TokenResponse } from "../issue.js";

/**
 * What each grant module of the token endpoint exports, in node-oidc-provider's shape: the grant type, the
 * parameters its handler reads and the client authentication it accepts (the registry, `index.ts`, gives the
 * handler only those parameters, and discovery advertises what the registered modules declare), and the handler.
 */
export interface TokenGrant {
  /** The `grant_type` value (RFC 6749 §4, RFC 7523 §2.1). */
  readonly grantType: string;
  /** The request parameters the handler reads, besides `grant_type` and those of client authentication. */
  readonly parameters: readonly string[];
  /** How the client may authenticate for this grant; none: the grant itself proves who asks (an assertion). */
  readonly clientAuthMethods: readonly AuthMethod[];
  /**
   * Whether the instance offers the grant (a feature flag); absent: always. When not, the token endpoint answers
   * unsupported_grant_type and discovery leaves the grant out, as for a grant that is not registered.
   */
  readonly enabled?: (deps: OidcDeps, s: RequestScope) => Promise<boolean>;
  handler(deps: OidcDeps, s: RequestScope, req: FastifyRequest, params: Record<string, string>): Promise<TokenResponse>;
}

/** Authenticates an application at the token endpoint with the method it registered, if the grant allows it. */
export async function authenticateApp(
  deps: OidcDeps,
  s: RequestScope,
  req: FastifyRequest,
  params: Record<string, string>,
  allowed: readonly AuthMethod[],
): Promise<OAuthClient> {
  const client = await deps.clients.authenticate(s.instance.id, s.issuer, `${s.issuer}${paths.token}`, credentialsOf(req, params), allowed);
  if (!client.oidc) throw oauth.unauthorizedClient("API applications cannot get tokens; they introspect them");
  return client;
}
