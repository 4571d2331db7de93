import type { FastifyReply, FastifyRequest } from "fastify";
import { terminateSessions } from "../command/sessions.js";
import { onIssuer } from "../domain/applications.js";
import { messagePage } from "../web/pages.js";
import { agentHashOf } from "../web/browser.js";
import { textsFor } from "../web/texts.js";
import type { OAuthClient } from "./clients.js";
import { paths, type OidcDeps, type RequestScope } from "./context.js";
import { decodeJwt, verifyRs256 } from "./jwt.js";
import { paramsOf } from "./params.js";
import { errorPage } from "./responses.js";

export const END_SESSION_DONE = `${paths.endSession}/done`;

/**
 * RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0). With a valid id_token_hint naming a session of
 * this browser (its `sid`, else its user `sub`), that session ends at once (and with it every access token and
 * every refresh token bound to it; offline refresh tokens outlive it, OIDC Core §11), and the browser's other
 * sessions stay. Any other hint (another user's, a session that ended) and no hint at all: the user confirms in
 * the login UI first, which signs the browser out of every account (§2: the OP MUST ask when the hint does not
 * belong to the current session, security review #16). The browser goes back only to a post_logout_redirect_uri
 * registered for the client, matched exactly, with `state`.
 */
export async function endSession(deps: OidcDeps, s: RequestScope, req: FastifyRequest, reply: FastifyReply) {
  let params: Record<string, string>;
  try {
    params = paramsOf(req);
  } catch (e) {
    return errorPage(reply, 400, "invalid_request", (e as Error).message);
  }
  let hint: Record<string, unknown> | undefined;
  if (params.id_token_hint) {
    const jwt = decodeJwt(params.id_token_hint);
    const keys = await deps.keys.published(s.instance.id);
    if (!jwt || !verifyRs256(jwt, (kid) => keys.find((k) => k.kid === kid)?.key) || jwt.payload.iss !== s.issuer) {
      return errorPage(reply, 400, "invalid_request", "id_token_hint is not a valid ID token of this issuer");
    }
    hint = jwt.payload;
  }
  const hintClient = hint ? String(hint.azp ?? (Array.isArray(hint.aud) ? hint.aud[0] : hint.aud)) : undefined;
  if (params.client_id && hintClient && params.client_id !== hintClient)
    return errorPage(reply, 400, "invalid_request", "client_id does not match the id_token_hint");
  const clientId = params.client_id ?? hintClient;
  const target = await redirectTarget(deps, s, clientId, params.post_logout_redirect_uri);
  if (target === "invalid") return errorPage(reply, 400, "invalid_request", "post_logout_redirect_uri is not registered for the client");

  const agentHash = agentHashOf(req);
  const browserSessions = agentHash ? await deps.sessions.ofBrowser(s.instance.id, agentHash) : [];
  // Signed in nowhere: nothing a forged request could end, nothing to ask.
  if (hint && !browserSessions.length) return backTo(reply, target, params.state);
  const named = hint && browserSessions.find((x) => x.userId === hint.sub && (hint.sid === undefined || x.id === hint.sid));
  if (!named) {
    const done = new URLSearchParams({
      ...(clientId ? { client_id: clientId } : {}),
      ...(target ? { post_logout_redirect_uri: target } : {}),
      ...(params.state ? { state: params.state } : {}),
    });
    const confirm = new URLSearchParams({ return_to: `${END_SESSION_DONE}?${done}`, ...(params.ui_locales ? { ui_locales: params.ui_locales } : {}) });
    return reply.status(303).header("location", `/ui/login/logout?${confirm}`).header("cache-control", "no-store").send();
  }
  // A browser holds one session per user: ending the user's sessions of this browser ends exactly the named one.
  await terminateSessions(deps.es, { instanceId: s.instance.id, agentHash: agentHash!, userId: named.userId, creator: named.userId });
  return backTo(reply, target, params.state);
}

/** After the confirmation in the login UI: back to the client (checked again), or a signed-out page. */
export async function endSessionDone(deps: OidcDeps, s: RequestScope, req: FastifyRequest, reply: FastifyReply) {
  const q = req.query as Record<string, string>;
  const target = await redirectTarget(deps, s, q.client_id, q.post_logout_redirect_uri);
  return backTo(reply, target === "invalid" ? undefined : target, q.state);
}

async function redirectTarget(deps: OidcDeps, s: RequestScope, clientId: string | undefined, uri: string | undefined): Promise<string | undefined | "invalid"> {
  if (!uri) return undefined;
  if (!clientId) return "invalid";
  const client: OAuthClient | undefined = await deps.clients.application(s.instance.id, clientId);
  return client?.oidc?.postLogoutRedirectUris.some((r) => onIssuer(r, s.issuer) === uri) ? uri : "invalid";
}

function backTo(reply: FastifyReply, target: string | undefined, state: string | undefined) {
  reply.header("cache-control", "no-store");
  if (!target) {
    const t = textsFor("en");
    return reply
      .type("text/html; charset=utf-8")
      .header("content-security-policy", "default-src 'none'; style-src 'self'; frame-ancestors 'none'")
      .send(messagePage({ lang: "en", t }, t.logout, t.loggedOut));
  }
  const url = new URL(target);
  if (state) url.searchParams.set("state", state);
  return reply.status(303).header("location", url.toString()).send();
}
