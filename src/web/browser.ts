import { createHash } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";

/**
 * What the login UI and the OIDC provider's browser endpoints share about the browser itself: its cookies,
 * the agent cookie that ties sessions to it, and the rule for form input.
 */
export const AGENT_COOKIE = "svc_agent";

export function cookiesOf(req: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const i = part.indexOf("=");
    if (i <= 0) continue;
    try {
      out[part.slice(0, i).trim()] = decodeURIComponent(part.slice(i + 1).trim());
    } catch {
      // A malformed cookie is as good as none.
    }
  }
  return out;
}

export const hashAgent = (agent: string) => createHash("sha256").update(agent).digest("hex");

/** The hash of the browser's agent cookie, as sessions are stored. */
export function agentHashOf(req: FastifyRequest): string | undefined {
  const agent = cookiesOf(req)[AGENT_COOKIE];
  return agent ? hashAgent(agent) : undefined;
}

/**
 * This server's origin as the browser addressed it: the Host it sent, and https when the server is reached over
 * https (SVC_EXTERNAL_SECURE: TLS may end at a proxy in front, so the request itself may be plain http).
 */
export function ownOriginOf(req: FastifyRequest, secure: boolean): string {
  const origin = `${secure || req.client.secure ? "https" : "http"}://${req.client.host}`;
  // As browsers write it (lower case, no default port), so that it compares with their Origin header.
  return URL.canParse(origin) ? new URL(origin).origin : origin;
}

/**
 * Strict-Transport-Security of the pages (login UI, the OIDC provider's browser endpoints): a year, the common
 * value (and the floor for browsers' preload lists); without includeSubDomains, since other hosts under the domain
 * are not this server's to decide for.
 */
export const STRICT_TRANSPORT = "max-age=31536000";

/**
 * Whether the browser reached this server over https, for Strict-Transport-Security: the request came over this
 * server's own TLS (SVC_TLS_CERT) or a trusted proxy says its client used https (`req.client.secure`), or
 * SVC_EXTERNAL_SECURE says TLS ends in front of the server. Browsers ignore the header when it arrives over plain
 * http, so it is harmless on a request that reached a proxy-fronted server directly.
 */
export function reachedOverHttps(req: FastifyRequest, externalSecure: boolean): boolean {
  return externalSecure || req.client.secure;
}

/** Adds Strict-Transport-Security to a page's answer when the browser reached it over https. */
export function addStrictTransport(req: FastifyRequest, reply: FastifyReply, externalSecure: boolean): void {
  if (reachedOverHttps(req, externalSecure)) reply.header("strict-transport-security", STRICT_TRANSPORT);
}

/**
 * Whether a form post comes from a page of another origin, by what the browser says. Sec-Fetch-Site tells
 * same-origin from same-site: a sibling host of the same site (cookie tossing, SameSite does not separate
 * siblings) is refused as well as another site; "none" is the user's own navigation, never another page's.
 * `Origin: null` tells nothing: browsers send it for any form on a page with `Referrer-Policy: no-referrer`, as
 * the login pages are. Clients that send neither header (not browsers) are left to the CSRF token.
 */
export function crossOriginPost(req: FastifyRequest, ownOrigin: string): boolean {
  const site = req.headers["sec-fetch-site"];
  if (site !== undefined && site !== "same-origin" && site !== "none") return true;
  const origin = req.headers.origin;
  return origin !== undefined && origin !== "null" && origin !== ownOrigin;
}

/**
 * The first parameter (query or form) whose name or value contains U+0000, if any. No OAuth or login parameter
 * needs one, and PostgreSQL refuses it in text: such a request is the client's error, never a failed query.
 */
export function nulParameter(values: unknown): string | undefined {
  if (!values || typeof values !== "object") return undefined;
  // Plain loops: this runs on every form and query of the OAuth endpoints.
  for (const k of Object.keys(values)) {
    if (k.includes("\u0000")) return JSON.stringify(k).slice(1, -1);
    const v = (values as Record<string, unknown>)[k];
    if (typeof v === "string" ? v.includes("\u0000") : Array.isArray(v) && v.some((x) => typeof x === "string" && x.includes("\u0000"))) return k;
  }
  return undefined;
}
