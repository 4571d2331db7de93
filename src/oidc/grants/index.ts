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
import * as tokenExchange from "./token-exchange.js";

/**
 * The grants of the token endpoint: what is listed here is dispatched to and advertised by discovery, and
 * nothing else. A grant with an `enabled` gate (token exchange: the `oidc_token_exchange` flag) is, while the
 * gate is closed for the instance, unsupported_grant_type like any unknown grant type, and not advertised.
 */
export const tokenGrants: readonly TokenGrant[] = [authorizationCode, refreshToken, clientCredentials, jwtBearer, tokenExchange];

// A Map, not an object: a grant_type such as "constructor" must find nothing.
const byType = new Map(tokenGrants.map((g) => [g.grantType, g]));

/** The client authentication methods of the token endpoint: those any grant accepts, in discovery's order. */
export const tokenEndpointAuthMethods = authMethods.filter((m) => tokenGrants.some((g) => g.clientAuthMethods.includes(m)));

/** Whether the instance offers the grant: its gate, when it has one, is open. */
const offered = async (grant: TokenGrant, deps: OidcDeps, s: RequestScope) => !grant.enabled || (await grant.enabled(deps, s));

/** The grants the instance offers, in the registry's order (discovery lists them). */
export async function offeredGrants(deps: OidcDeps, s: RequestScope): Promise<TokenGrant[]> {
  const open = await Promise.all(tokenGrants.map((g) => offered(g, deps, s)));
  return tokenGrants.filter((_, i) => open[i]);
}

/** POST /oauth/v2/token (RFC 6749 §3.2): the grant of `grant_type`, given the parameters it declares. */
export async function token(deps: OidcDeps, s: RequestScope, req: FastifyRequest, params: Record<string, string>): Promise<TokenResponse> {
  if (!params.grant_type) throw oauth.invalidRequest("grant_type is missing");
  const grant = byType.get(params.grant_type);
  if (!grant || !(await offered(grant, deps, s))) throw oauth.unsupportedGrantType(`the grant type ${params.grant_type.slice(0, 100)} is not supported`);
  const accepted = [...grant.parameters, ...(grant.clientAuthMethods.length ? CLIENT_AUTH_PARAMETERS : [])];
  const declared = Object.fromEntries(Object.entries(params).filter(([k]) => accepted.includes(k)));
  return grant.handler(deps, s, req, declared);
}
