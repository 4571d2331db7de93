import type { FastifyReply } from "fastify";
import { inheritanceChain } from "../domain/contexts.js";
import { defaultsOf, supportedLanguages } from "../domain/settings-kinds.js";
import { responseTypes } from "./authorize.js";
import { paths, type OidcDeps, type RequestScope } from "./context.js";
import { offeredGrants, tokenEndpointAuthMethods } from "./grants/index.js";
import type { TokenGrant } from "./grants/grant.js";
import { introspectionAuthMethods } from "./introspection.js";
import { responseModes } from "./responses.js";
import { revocationAuthMethods } from "./revocation.js";
import { API_AUDIENCE, METADATA_SCOPE, standardScopes, ROLES_SCOPE } from "./scopes.js";

/**
 * The grant types: those the authorize endpoint's response types begin (RFC 7591 §2.1: code is
 * authorization_code, id_token is implicit), then those the token endpoint's registry handles for the
 * instance (a gated grant only while its gate is open), each once.
 */
export const grantTypesSupported = (grants: readonly TokenGrant[]): string[] => [
  ...new Set([...Object.values(responseTypes), ...grants.map((g) => g.grantType)]),
];

/** Discovery (OIDC Discovery 1.0 §3) for the instance of the request. */
export async function discovery(deps: OidcDeps, s: RequestScope) {
  const [langs, grants] = await Promise.all([
    deps.settings.values("language", inheritanceChain({ type: "instance", instanceId: s.instance.id })),
    offeredGrants(deps, s),
  ]);
  const restricted: readonly string[] = langs.restricted_languages;
  const url = (path: string) => `${s.issuer}${path}`;
  return {
    issuer: s.issuer,
    authorization_endpoint: url(paths.authorize),
    token_endpoint: url(paths.token),
    introspection_endpoint: url(paths.introspect),
    userinfo_endpoint: url(paths.userinfo),
    revocation_endpoint: url(paths.revoke),
    end_session_endpoint: url(paths.endSession),
    jwks_uri: url(paths.keys),
    scopes_supported: [...standardScopes, ROLES_SCOPE, METADATA_SCOPE, `urn:svc:iam:org:project:id:${API_AUDIENCE}:aud`],
    response_types_supported: Object.keys(responseTypes),
    response_modes_supported: [...responseModes],
    grant_types_supported: grantTypesSupported(grants),
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: ["RS256"],
    request_object_signing_alg_values_supported: ["RS256"],
    token_endpoint_auth_methods_supported: tokenEndpointAuthMethods,
    token_endpoint_auth_signing_alg_values_supported: ["RS256"],
    introspection_endpoint_auth_methods_supported: introspectionAuthMethods,
    introspection_endpoint_auth_signing_alg_values_supported: ["RS256"],
    revocation_endpoint_auth_methods_supported: revocationAuthMethods,
    revocation_endpoint_auth_signing_alg_values_supported: ["RS256"],
    claims_supported: [
      "sub",
      "aud",
      "exp",
      "iat",
      "iss",
      "auth_time",
      "nonce",
      "acr",
      "amr",
      "c_hash",
      "at_hash",
      "azp",
      "sid",
      "act",
      "client_id",
      "scope",
      "name",
      "given_name",
      "family_name",
      "nickname",
      "preferred_username",
      "locale",
      "updated_at",
      "email",
      "email_verified",
      "phone_number",
      "phone_number_verified",
      ROLES_SCOPE,
    ],
    code_challenge_methods_supported: ["S256"],
    ui_locales_supported: (restricted.length ? restricted : defaultsOf("language").restricted_languages).filter((l) => supportedLanguages.includes(l)),
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    claims_parameter_supported: false,
    authorization_response_iss_parameter_supported: true,
  };
}

/** The JWKS: every public key whose tokens may still be valid. Clients may cache it briefly. */
export async function jwks(deps: OidcDeps, s: RequestScope, reply: FastifyReply) {
  await deps.tokens.signingKey(s.instance.id); // a fresh instance gets its first key before anyone asks for a token
  const keys = await deps.keys.published(s.instance.id);
  reply.header("cache-control", "public, max-age=300, must-revalidate");
  return { keys: keys.map((k) => k.jwk) };
}
