import { CONSOLE_PATH } from "../domain/console.js";
import { AGENT_COOKIE } from "../web/browser.js";
import * as pages from "../web/pages.js";
import type { ExternalSignIn } from "./idp.js";
import { LOGIN_PATH, type LoginKit } from "./kit.js";

/**
 * The first step: the login UI's entry page (the browser's accounts to choose from when it is signed in with
 * several, or with one and prompt=select_account) and the login name.
 */
export function registerLoginName(kit: LoginKit, external: ExternalSignIn): void {
  // The server's root leads to the admin console (contract), which signs in through this page; the login page's
  // path with a trailing slash leads to it, its query kept.
  kit.ui.get("/", (_req, reply) => reply.redirect(CONSOLE_PATH, 302));
  kit.ui.get(`${LOGIN_PATH}/`, (req, reply) => {
    const query = req.url.indexOf("?");
    return reply.redirect(query < 0 ? LOGIN_PATH : `${LOGIN_PATH}${req.url.slice(query)}`, 302);
  });

  kit.ui.get(LOGIN_PATH, async (req, reply) => {
    const c = await kit.contextOf(req, reply);
    if (!c.instance) return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.notFound), 404);
    const accounts = c.fields.prompt === "login" ? [] : await kit.accountsOf(c.instance.id, c.cookies[AGENT_COOKIE]);
    if (accounts.length > 1 || (accounts.length === 1 && c.fields.prompt === "select_account")) return c.send(pages.accountsPage(c.page, accounts));
    if (accounts.length === 1 && !c.page.carry.return_to) return c.send(pages.signedInPage(c.page, accounts[0]!));
    const login = await kit.loginSettings(c.instance.id);
    const loginName = (c.fields.login_hint ?? "").slice(0, 200);
    const providers = await external.providersFor(c, c.instance);
    return c.send(pages.loginNamePage(c.page, { canRegister: login.allow_register, loginName, passkey: login.passwordless_allowed, providers }));
  });

  // The login name alone never says whether the user exists: the password page follows either way.
  kit.post(`${LOGIN_PATH}/loginname`, async (c) => {
    const loginName = (c.fields.loginName ?? "").trim().slice(0, 200);
    if (!loginName) return c.send(pages.loginNamePage(c.page, { canRegister: false, error: c.page.t.wrongCredentials }));
    return c.send(pages.passwordPage(c.page, { loginName }));
  });
}
