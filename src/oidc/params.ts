import { nulParameter } from "../web/browser.js";
import type { FastifyRequest } from "fastify";
import { oauth } from "./errors.js";

/**
 * Parameters that may be sent several times: token exchange's `audience` and `resource` (RFC 8693 §2.1, RFC 8707
 * §2). Their values are joined with spaces (no audience of this server holds one).
 */
const MULTI_VALUED = new Set(["audience", "resource"]);

/**
 * The parameters of an OAuth request: the query (GET) or the form body (POST). A parameter given twice is
 * invalid_request (RFC 6749 §3.1), except those that may be (MULTI_VALUED); empty values count as absent.
 */
export function paramsOf(req: FastifyRequest): Record<string, string> {
  const raw = req.method === "POST" ? (req.body as Record<string, string | string[]> | undefined) : (req.query as Record<string, string | string[]>);
  const out: Record<string, string> = {};
  const withNul = nulParameter(raw);
  if (withNul) throw oauth.invalidRequest(`the parameter ${withNul} must not contain NUL characters`);
  for (const [k, v] of Object.entries(raw ?? {})) {
    if (Array.isArray(v) && MULTI_VALUED.has(k)) {
      const values = v.filter((x) => x !== "");
      if (values.length) out[k] = values.join(" ");
      continue;
    }
    if (Array.isArray(v)) throw oauth.invalidRequest(`the parameter ${k} is repeated`);
    if (typeof v === "string" && v !== "") out[k] = v;
  }
  return out;
}

/**
 * The longest value, in characters, of each parameter an authorization request may carry (OIDC Core §3.1.2.1,
 * RFC 6749 §4.1.1, RFC 7636 §4.3). The request is stored with them until it expires and some are echoed back or
 * put into tokens, so none may be as long as the URL allows (security review #22). `state` leaves room for the
 * data some clients keep in it (a signed JWT); the others are many times what a valid value needs. `request` and
 * `request_uri` are refused whatever their length (request_not_supported).
 */
export const AUTHORIZE_PARAMETER_LIMITS: Readonly<Record<string, number>> = {
  client_id: 200,
  redirect_uri: 2000,
  response_type: 100,
  response_mode: 50,
  scope: 4000,
  state: 2000,
  nonce: 2000,
  code_challenge: 128,
  code_challenge_method: 20,
  prompt: 100,
  max_age: 20,
  display: 20,
  login_hint: 200,
  ui_locales: 200,
  claims_locales: 200,
  acr_values: 500,
  claims: 4000,
  id_token_hint: 10_000,
};

/** invalid_request naming the first of `names` whose value is longer than its limit. */
export function checkLengths(params: Record<string, string>, names: readonly string[], limits: Readonly<Record<string, number>>): void {
  for (const name of names) {
    const limit = limits[name];
    if (limit !== undefined && (params[name]?.length ?? 0) > limit) throw oauth.invalidRequest(`${name} must not be longer than ${limit} characters`);
  }
}

/** Form bodies keep repeated keys as arrays, so that `paramsOf` can refuse them. */
export function parseForm(body: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(body)) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}
