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

/** Form bodies keep repeated keys as arrays, so that `paramsOf` can refuse them. */
export function parseForm(body: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(body)) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}
