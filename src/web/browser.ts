import { createHash } from "node:crypto";
import type { FastifyRequest } from "fastify";

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
