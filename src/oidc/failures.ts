import type { FastifyRequest } from "fastify";
import type { Tokens } from "./tokens.js";
import { decodeJwt } from "./jwt.js";
import type { OAuthError } from "./errors.js";

/** Requests that presented a token this server never issued (marked by the endpoint that found out). */
const unknownTokens = new WeakSet<FastifyRequest>();

/**
 * Marks the request when `token` is none of this server's: neither an opaque token that opens (authenticated
 * encryption: only this server can make one) nor a JWT. Expired and revoked tokens were issued here: a client
 * meets them in its normal life (a resource server after every logout), and they are not guesses.
 */
export function noteUnknownToken(req: FastifyRequest, tokens: Pick<Tokens, "peek">, token: string | undefined): void {
  if (!token || (!tokens.peek(token) && !decodeJwt(token))) unknownTokens.add(req);
}

/**
 * Whether an OAuth request failed at something guessable (security review, finding 9 and the failure limits):
 * client authentication (a wrong secret or assertion, an unknown client) or a token never issued here. Counted
 * per client address only, never per client: requests that merely name a client cannot lock it out.
 */
export function failedAtGuessable(req: FastifyRequest, err: OAuthError | undefined): boolean {
  return unknownTokens.has(req) || err?.error === "invalid_client";
}
