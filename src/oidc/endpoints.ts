import type { FastifyReply, FastifyRequest } from "fastify";
import { languageDefaults } from "../domain/languages.js";
import { settingsChain } from "../query/settings.js";
import { userClaims } from "./claims.js";
import { credentialsOf } from "./clients.js";
import { paths, type OidcDeps, type RequestScope } from "./context.js";
import { OAuthError, oauth } from "./errors.js";
import { grantTypesSupported, revokeRefresh } from "./grants.js";
import { API_AUDIENCE, standardScopes, ROLES_SCOPE } from "./scopes.js";
import { sha256, type AccessClaims } from "./tokens.js";
import { translatedLanguages } from "../web/texts.js";

/** Discovery (OIDC Discovery 1.0 §3) for the instance of the request. */
export async function discovery(deps: OidcDeps, s: RequestScope) {
  const langs = await deps.settings.resolve("language", settingsChain({ type: "instance", instanceId: s.instance.id }), languageDefaults);
  const restricted = (langs.get("restricted_languages")?.value as string[] | undefined) ?? [];
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
    scopes_supported: [...standardScopes, ROLES_SCOPE, `urn:svc:iam:org:project:id:${API_AUDIENCE}:aud`],
    response_types_supported: ["code", "id_token", "id_token token"],
    response_modes_supported: ["query", "fragment", "form_post"],
    grant_types_supported: grantTypesSupported,
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: ["RS256"],
    request_object_signing_alg_values_supported: ["RS256"],
    token_endpoint_auth_methods_supported: ["none", "client_secret_basic", "client_secret_post", "private_key_jwt"],
    token_endpoint_auth_signing_alg_values_supported: ["RS256"],
    introspection_endpoint_auth_methods_supported: ["client_secret_basic", "private_key_jwt"],
    introspection_endpoint_auth_signing_alg_values_supported: ["RS256"],
    revocation_endpoint_auth_methods_supported: ["none", "client_secret_basic", "client_secret_post", "private_key_jwt"],
    revocation_endpoint_auth_signing_alg_values_supported: ["RS256"],
    claims_supported: [
      "sub", "aud", "exp", "iat", "iss", "auth_time", "nonce", "acr", "amr", "c_hash", "at_hash", "azp", "sid", "client_id", "scope",
      "name", "given_name", "family_name", "nickname", "preferred_username", "locale", "updated_at", "email", "email_verified",
      "phone_number", "phone_number_verified", ROLES_SCOPE,
    ],
    code_challenge_methods_supported: ["S256"],
    ui_locales_supported: (restricted.length ? restricted : languageDefaults.restricted_languages).filter((l) => translatedLanguages.includes(l)),
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    claims_parameter_supported: false,
    authorization_response_iss_parameter_supported: true,
  };
}

/** The JWKS: every public key whose tokens may still be valid. Clients may cache it briefly. */
export async function jwks(deps: OidcDeps, s: RequestScope, reply: FastifyReply) {
  await deps.keys.signer(s.instance.id); // a fresh instance gets its first key before anyone asks for a token
  const keys = await deps.keys.published(s.instance.id);
  reply.header("cache-control", "public, max-age=300, must-revalidate");
  return { keys: keys.map((k) => k.jwk) };
}

/** The bearer token of a request: the Authorization header, or (POST form) access_token. Both: invalid_request. */
function bearerOf(req: FastifyRequest, params: Record<string, string>): string | undefined {
  const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "");
  if (m && params.access_token) throw oauth.invalidRequest("the token was sent twice");
  return m?.[1] ?? params.access_token;
}

/** Userinfo (OIDC Core §5.3), GET and POST; a bad or expired token is 401 with WWW-Authenticate. */
export async function userinfo(deps: OidcDeps, s: RequestScope, req: FastifyRequest, params: Record<string, string>) {
  const token = bearerOf(req, params);
  const claims = token ? await deps.tokens.verifyAccess(token, s.instance.id) : undefined;
  if (!claims) throw oauth.invalidToken("the access token is invalid or expired");
  const scopes = claims.scope.split(" ");
  if (!scopes.includes("openid")) throw new OAuthError("insufficient_scope", "the token was not issued with the openid scope", 403);
  const user = await deps.tokens.user(claims.sub);
  if (!user) throw oauth.invalidToken("the user of the token no longer exists");
  const base = { sub: user.id, ...userClaims(user, scopes) };
  const roleKeys = Object.keys(claims).filter((k) => k.startsWith("urn:svc:iam:org:project:"));
  const roles = Object.fromEntries(roleKeys.map((k) => [k, (claims as unknown as Record<string, unknown>)[k]]));
  // A `preuserinfo` function execution may add claims; sub and the standard claims stay as they are.
  const extra = await deps.functions.run(s.instance.id, "preuserinfo", { userID: user.id, clientID: claims.client_id, scopes }, "claims", {} as Record<string, unknown>, (json) =>
    json && typeof json === "object" && !Array.isArray(json) ? (json as Record<string, unknown>) : {},
  );
  return { ...extra, ...roles, ...base };
}

/** Introspection (RFC 7662): the client must authenticate; only tokens meant for it are active. */
export async function introspect(deps: OidcDeps, s: RequestScope, req: FastifyRequest, params: Record<string, string>) {
  const client = await deps.clients.authenticate(s.instance.id, s.issuer, `${s.issuer}${paths.introspect}`, credentialsOf(req, params), ["client_secret_basic", "private_key_jwt"]);
  if (!params.token) throw oauth.invalidRequest("token is missing");
  const claims = await deps.tokens.verifyAccess(params.token, s.instance.id);
  if (!claims || !(claims.aud.includes(client.clientId) || (client.projectId && claims.aud.includes(client.projectId)))) return { active: false };
  const user = await deps.tokens.user(claims.sub);
  const scopes = claims.scope.split(" ");
  return {
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
    ...(claims.auth_time ? { auth_time: claims.auth_time } : {}),
    ...(claims.amr ? { amr: claims.amr } : {}),
    ...(user ? { username: user.username, ...userClaims(user, scopes) } : {}),
  };
}

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
    ["none", "client_secret_basic", "client_secret_post", "private_key_jwt"],
    async (id) => (await deps.clients.application(s.instance.id, id)) ?? (await deps.clients.machine(s.instance.id, { username: id })),
  );
  if (!params.token) throw oauth.invalidRequest("token is missing");
  if (params.token_type_hint !== "access_token") {
    const refresh = await deps.db.prisma.refreshToken.findUnique({ where: { tokenHash: sha256(params.token) } });
    if (refresh && refresh.instanceId === s.instance.id) {
      if (refresh.clientId !== client.clientId) throw oauth.invalidClient("the token was not issued to this client");
      await revokeRefresh(deps, s.instance.id, refresh.id, client.clientId);
      return;
    }
  }
  const claims: AccessClaims | undefined = await deps.tokens.verifyAccess(params.token, s.instance.id);
  if (!claims) return;
  if (claims.client_id !== client.clientId) throw oauth.invalidClient("the token was not issued to this client");
  await deps.tokens.revokeAccess(s.instance.id, [{ jti: claims.jti, exp: claims.exp }], client.clientId);
}
