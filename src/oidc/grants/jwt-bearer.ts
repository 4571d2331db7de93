import type { FastifyRequest } from "fastify";
import { userClaims } from "../claims.js";
import { checkAssertionTimes, type AuthMethod } from "../clients.js";
import { paths, type OidcDeps, type RequestScope } from "../context.js";
import { oauth } from "../errors.js";
import { issueAccess, tokenResponse, type TokenResponse } from "../issue.js";
import { decodeJwt, verifyRs256 } from "../jwt.js";
import { audienceOf, parseScopes } from "../scopes.js";
import { Tokens } from "../tokens.js";

/** JWT profile (RFC 7523 §2.1) with a machine user's key: iss = sub = the user's ID, aud the issuer. No refresh token. */
export const grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer";
export const parameters = ["assertion", "scope"] as const;
/** The signed assertion is the proof: no client authentication besides it. */
export const clientAuthMethods: readonly AuthMethod[] = [];

export async function handler(deps: OidcDeps, s: RequestScope, _req: FastifyRequest, params: Record<string, string>): Promise<TokenResponse> {
  if (!params.assertion) throw oauth.invalidRequest("assertion is missing");
  const jwt = decodeJwt(params.assertion);
  if (!jwt) throw oauth.invalidGrant("assertion is not a JWT");
  const p = jwt.payload;
  if (typeof p.iss !== "string" || p.iss !== p.sub) throw oauth.invalidGrant("assertion: iss and sub must both be the user ID");
  const client = await deps.clients.machine(s.instance.id, { userId: p.sub });
  if (!client?.active) throw oauth.invalidGrant("assertion: unknown or inactive user");
  const ok = verifyRs256(jwt, await deps.oauthClients.verificationKeys({ userId: client.id }));
  if (!ok) throw oauth.invalidGrant("assertion: the signature does not verify with the user's keys");
  checkAssertionTimes(p, "assertion", (d) => oauth.invalidGrant(d), deps.clock.now());
  const aud = Array.isArray(p.aud) ? p.aud : [p.aud];
  if (!aud.some((a) => a === s.issuer || a === `${s.issuer}${paths.token}`)) throw oauth.invalidGrant("assertion: aud must contain the issuer");
  await deps.replay.use(`jwt-profile:${client.id}:${String(p.jti ?? "")}`, Number(p.exp), () => oauth.invalidGrant("assertion: jti missing or already used"));
  const scopes = parseScopes(params.scope).filter((x) => x !== "offline_access");
  const access = await issueAccess(
    deps,
    s,
    client.accessTokenType,
    { iss: s.issuer, sub: client.id, client_id: client.id, aud: audienceOf(scopes, []), scope: scopes.join(" "), amr: ["private_key_jwt"] },
    client.orgId,
  );
  if (!scopes.includes("openid")) return tokenResponse(access);
  const user = (await deps.users.tokenSubject(client.id))!;
  const idToken = await deps.tokens.idToken(s.instance.id, {
    iss: s.issuer,
    sub: client.id,
    aud: [client.id],
    azp: client.id,
    at_hash: Tokens.halfHash(access.token),
    ...userClaims(user, scopes),
  });
  return tokenResponse(access, { id_token: idToken });
}
