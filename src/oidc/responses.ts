import { createHash } from "node:crypto";
import type { FastifyReply } from "fastify";
import { esc } from "../web/pages.js";

/** The response modes of the authorize endpoint (OAuth 2.0 Multiple Response Types §2.1, Form Post Response Mode). */
export const responseModes = ["query", "fragment", "form_post"] as const;
export type ResponseMode = (typeof responseModes)[number];

/** The default response mode of a response type (OAuth 2.0 Multiple Response Types §2.1). */
export const defaultMode = (responseType: string): ResponseMode => (responseType === "code" ? "query" : "fragment");

/** Sends authorization response parameters to the client's redirect URI in the response mode. */
export function sendToClient(reply: FastifyReply, redirectUri: string, mode: ResponseMode, params: Record<string, string>): FastifyReply {
  const entries = Object.entries(params).filter(([, v]) => v !== undefined && v !== "");
  reply.header("cache-control", "no-store").header("referrer-policy", "no-referrer");
  if (mode === "form_post") {
    // The one page that runs a script: it only submits the form (allowed by its hash); without scripts, a button does.
    const script = "document.forms[0].submit()";
    const hash = createHash("sha256").update(script).digest("base64");
    const inputs = entries.map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`).join("");
    reply.header(
      "content-security-policy",
      `default-src 'none'; script-src 'sha256-${hash}'; form-action ${new URL(redirectUri).origin}; frame-ancestors 'none'; base-uri 'none'`,
    );
    reply.header("x-frame-options", "DENY").header("x-content-type-options", "nosniff");
    return reply
      .type("text/html; charset=utf-8")
      .send(
        `<!doctype html><html><head><meta charset="utf-8"><title>Submit</title></head><body><form method="post" action="${esc(redirectUri)}">${inputs}<noscript><button type="submit">Continue</button></noscript></form><script>${script}</script></body></html>`,
      );
  }
  const url = new URL(redirectUri);
  const encoded = new URLSearchParams(entries);
  if (mode === "fragment") url.hash = encoded.toString();
  else for (const [k, v] of encoded) url.searchParams.append(k, v);
  // 303: never 307 after a credential POST (RFC 9700 §4.12).
  return reply.status(303).header("location", url.toString()).send();
}

/** An error page for requests that must not be redirected (unknown client, unregistered redirect URI). */
export function errorPage(reply: FastifyReply, status: number, error: string, description: string): FastifyReply {
  reply
    .header("content-security-policy", "default-src 'none'; frame-ancestors 'none'; base-uri 'none'")
    .header("x-frame-options", "DENY")
    .header("x-content-type-options", "nosniff")
    .header("referrer-policy", "no-referrer")
    .header("cache-control", "no-store");
  return reply
    .status(status)
    .type("text/html; charset=utf-8")
    .send(
      `<!doctype html><html><head><meta charset="utf-8"><title>Error</title></head><body><h1>The request cannot be completed</h1><p><code>${esc(error)}</code>: ${esc(description)}</p></body></html>`,
    );
}
