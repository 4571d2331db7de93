import { AGENT_COOKIE } from "../web/browser.js";
import * as pages from "../web/pages.js";
import { continueTo, LOGIN_PATH, type LoginKit } from "./kit.js";

/** Account selection: one of the browser's signed-in accounts (the entry page lists them) continues the flow. */
export function registerSelectAccount(kit: LoginKit): void {
  kit.post(`${LOGIN_PATH}/select`, async (c, reply, instance) => {
    const account = (await kit.accountsOf(instance.id, c.cookies[AGENT_COOKIE])).find((a) => a.sessionId === c.fields.sessionId);
    if (!account) return c.send(pages.loginNamePage(c.page, { canRegister: false }), 400);
    if (c.page.carry.return_to) return kit.redirect(c, reply, continueTo(c.page.carry.return_to, account.sessionId));
    return c.send(pages.signedInPage(c.page, account));
  });
}
