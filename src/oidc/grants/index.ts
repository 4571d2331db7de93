import type { FastifyRequest } from "fastify";
import { authMethods, CLIENT_AUTH_PARAMETERS } from "../clients.js";
import type { OidcDeps, RequestScope } from "../context.js";
import { oauth } from "../errors.js";
import type { TokenResponse } from "../issue.js";
import * as authorizationCode from "./authorization-code.js";
import * as clientCredentials from "./client-credentials.js";
import type { TokenGrant } from "./grant.js";
import * as jwtBearer from "./jwt-bearer.js";
import * as refreshToken from "./refresh-token.js";

/**
 * The grants of the token endpoint: what is listed here is dispatched to and advertised by discovery, and
 * nothing else. Token exchange (RFC 8693) is not among them yet: a later issue adds its module here, behind
 * the `oidc_token_exchange` flag; until then it is unsupported_grant_type like any unknown grant type.
 */
export const tokenGrants: readonly TokenGrant[] = [authorizationCode, refreshToken, clientCredentials, jwtBearer];

// A Map, not an object: a grant_type such as "constructor" must find nothing.
const byType = new Map(tokenGrants.map((g) => [g.grantType, g]));

/** The client authentication methods of the token endpoint: those any grant accepts, in discovery's order. */
export const tokenEndpointAuthMethods = authMethods.filter((m) => tokenGrants.some((g) => g.clientAuthMethods.includes(m)));

/** POST /oauth/v2/token (RFC 6749 §3.2): the grant of `grant_type`, given the parameters it declares. */
export async function token(deps: OidcDeps, s: RequestScope, req: FastifyRequest, params: Record<string, string>): Promise<TokenResponse> {
  if (!params.grant_type) throw oauth.invalidRequest("grant_type is missing");
  const grant = byType.get(params.grant_type);
  if (!grant) throw oauth.unsupportedGrantType(`the grant type ${params.grant_type.slice(0, 100)} is not supported`);
  const accepted = [...grant.parameters, ...(grant.clientAuthMethods.length ? CLIENT_AUTH_PARAMETERS : [])];
  const declared = Object.fromEntries(Object.entries(params).filter(([k]) => accepted.includes(k)));
  return grant.handler(deps, s, req, declared);
}
