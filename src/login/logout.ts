import { terminateSessions } from "../command/sessions.js";
import { AGENT_COOKIE, hashAgent } from "../web/browser.js";
import * as pages from "../web/pages.js";
import { LOGIN_PATH, type LoginKit } from "./kit.js";

/** Signing out: the browser's sessions end and its agent cookie is cleared; on to `return_to` when given. */
export function registerLogout(kit: LoginKit): void {
  kit.ui.get(`${LOGIN_PATH}/logout`, async (req, reply) => {
    const c = await kit.contextOf(req, reply);
    return c.send(pages.logoutPage(c.page));
  });

  kit.post(`${LOGIN_PATH}/logout`, async (c, reply, instance) => {
    const agent = c.cookies[AGENT_COOKIE];
    if (agent) await terminateSessions(kit.deps.es, { instanceId: instance.id, agentHash: hashAgent(agent), creator: "" });
    c.setCookies.push(kit.cookie(AGENT_COOKIE, "", { sameSite: "Lax", path: "/", maxAge: 0 }));
    if (c.page.carry.return_to) return kit.redirect(c, reply, c.page.carry.return_to);
    return c.send(pages.messagePage(c.page, c.page.t.logout, c.page.t.loggedOut));
  });
}
