import { Code } from "@connectrpc/connect";
import type { FastifyReply } from "fastify";
import { type IdpLink, linkFoundAccount } from "../command/idp-links.js";
import { signIn } from "../command/sessions.js";
import type { InstanceRow } from "../query/tenancy.js";
import { AGENT_COOKIE, hashAgent } from "../web/browser.js";
import * as pages from "../web/pages.js";
import { continueTo, type Ctx, type LoginKit, refusedWith, type SignedInUser } from "./kit.js";
import { newCookieValue } from "./signing.js";

/** Completes a sign-in with the methods used (amr). */
export type Finish = (c: Ctx, reply: FastifyReply, instance: InstanceRow, user: SignedInUser, amr?: string[]) => Promise<unknown>;

/**
 * The last step of every sign-in: the browser signed in as `user` (its agent cookie set when new), and on to where
 * the flow wants to go, the OIDC provider's callback told the session (303), or else the signed-in page.
 */
export function finishStep(kit: LoginKit): Finish {
  const { es } = kit.deps;
  return async (c, reply, instance, user, amr = ["pwd"]) => {
    let agent = c.cookies[AGENT_COOKIE];
    if (!agent) {
      agent = newCookieValue();
      c.setCookies.push(kit.cookie(AGENT_COOKIE, agent, { sameSite: "Lax", path: "/" }));
    }
    // The application asked for users of one organisation: no one else signs in for it (the callback checks too).
    if (c.org !== undefined && c.org?.id !== user.orgId) return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.notInOrganization), 403);
    // A first factor proven at a provider is "fed" in amr; which provider, the session keeps (introspection's idp_id).
    const idpId = amr.find((m) => m.startsWith("fed:"))?.slice("fed:".length);
    // "Link to my existing account": the link is written now that every factor the user needs is proven.
    const link = amr.find((m) => m.startsWith("link:"));
    if (link && !(await linkOnSignIn(kit, instance.id, user.id, link.slice("link:".length)))) {
      return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.externalFailed), 409);
    }
    const methods = amr.map((m) => (m.startsWith("fed:") ? "fed" : m.startsWith("link:") ? "pwd" : m));
    const sessionId = await signIn(es, kit.sessions, {
      instanceId: instance.id,
      agentHash: hashAgent(agent),
      userId: user.id,
      orgId: user.orgId,
      amr: methods,
      ...(idpId ? { idpId } : {}),
    });
    if (c.page.carry.return_to) return kit.redirect(c, reply, continueTo(c.page.carry.return_to, sessionId));
    return c.send(pages.signedInPage(c.page, { loginName: user.username, displayName: user.displayName, sessionId }));
  };
}

/** The link a "link to my existing account" sign-in carried (base64url JSON); false when the account is linked to another user meanwhile. */
async function linkOnSignIn(kit: LoginKit, instanceId: string, userId: string, encoded: string): Promise<boolean> {
  const link = JSON.parse(Buffer.from(encoded, "base64url").toString()) as IdpLink;
  try {
    return await linkFoundAccount(kit.deps.es, { instanceId, userId, creator: userId, link });
  } catch (e) {
    // The external account was linked to another user meanwhile: no link, no sign-in through this step.
    if (refusedWith(e, Code.AlreadyExists, Code.NotFound)) return false;
    throw e;
  }
}
