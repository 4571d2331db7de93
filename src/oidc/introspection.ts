import { acrOf } from "./acr.js";
import type { FastifyRequest } from "fastify";
import { extraScopeClaims, userClaims } from "./claims.js";
import { credentialsOf, type AuthMethod } from "./clients.js";
import { paths, type OidcDeps, type RequestScope } from "./context.js";
import { oauth } from "./errors.js";
import { noteUnknownToken } from "./failures.js";

/** The methods API applications register (a secret in Basic, or a key); a public client (`none`) may not introspect. */
export const introspectionAuthMethods: readonly AuthMethod[] = ["client_secret_basic", "private_key_jwt"];

/** Introspection (RFC 7662): the client must authenticate; only tokens meant for it are active. */
export async function introspect(deps: OidcDeps, s: RequestScope, req: FastifyRequest, params: Record<string, string>) {
  const client = await deps.clients.authenticate(
    s.instance.id,
    s.issuer,
    `${s.issuer}${paths.introspect}`,
    credentialsOf(req, params),
    introspectionAuthMethods,
  );
  if (!params.token) throw oauth.invalidRequest("token is missing");
  const claims = await deps.tokens.verifyAccess(params.token, s.instance.id);
  if (!claims) noteUnknownToken(req, deps.tokens, params.token);
  if (!claims || !(claims.aud.includes(client.clientId) || (client.projectId && claims.aud.includes(client.projectId)))) return { active: false };
  const user = await deps.users.tokenSubject(claims.sub);
  // The login name, `<username>@<primary domain of the user's organisation>` (the specification's introspection).
  const org = user ? await deps.tenancy.orgById(user.instanceId, user.orgId) : null;
  const scopes = claims.scope.split(" ");
  // Assigned one by one: a literal of conditional spreads takes V8's slow path on every call.
  const answer: Record<string, unknown> = {
    active: true,
    scope: claims.scope,
    client_id: claims.client_id,
    token_type: "Bearer",
    exp: claims.exp,
    iat: claims.iat,
    nbf: claims.iat,
    sub: claims.sub,
    aud: claims.aud,
    iss: claims.iss,
    jti: claims.jti,
  };
  if (claims.auth_time) answer.auth_time = claims.auth_time;
  if (claims.amr) {
    answer.amr = claims.amr;
    answer.acr = acrOf(claims.amr);
    // Signed in through a provider: which one (read only then, from the session).
    const idpId = claims.amr.includes("fed") && claims.sid ? await deps.sessions.idpOf(claims.sid) : undefined;
    if (idpId) answer.idp_id = idpId;
  }
  // RFC 8693 §4.1 / RFC 7662: who acts for the subject (token exchange with an actor).
  if (claims.act) answer.act = claims.act;
  if (user) {
    answer.username = org ? `${user.username}@${org.primaryDomain}` : user.username;
    Object.assign(answer, userClaims(user, scopes), await extraScopeClaims(deps, user, scopes));
  }
  return answer;
}
