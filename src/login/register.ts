import { Code } from "@connectrpc/connect";
import { createHuman } from "../command/users.js";
import { hashPassword } from "../crypto/password.js";
import { passwordRules } from "../query/password-rules.js";
import * as pages from "../web/pages.js";
import type { Finish } from "./finish.js";
import { LOGIN_PATH, type LoginKit, refusedWith, usernameUnavailable } from "./kit.js";

/** Self-registration (login settings allow_register): a human user of the instance's default organisation, signed in at once. */
export function registerRegistration(kit: LoginKit, finish: Finish): void {
  const { es, box, settings } = kit.deps;
  const canRegister = async (instanceId: string) => (await kit.loginSettings(instanceId)).allow_register;

  kit.ui.get(`${LOGIN_PATH}/register`, async (req, reply) => {
    const c = await kit.contextOf(req, reply);
    if (!c.instance || !(await canRegister(c.instance.id))) return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.notFound), 404);
    return c.send(pages.registerPage(c.page, {}));
  });

  kit.post(`${LOGIN_PATH}/register`, async (c, reply, instance) => {
    if (!(await canRegister(instance.id)) || !instance.defaultOrgId) return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.notFound), 404);
    const f = c.fields;
    const values = { givenName: f.givenName ?? "", familyName: f.familyName ?? "", email: f.email ?? "", loginName: f.loginName ?? "" };
    const again = (error: string) => c.send(pages.registerPage(c.page, { error, values }), 400);
    if (Object.values(values).some((v) => !v.trim() || v.length > 200) || /\s/.test(values.loginName) || !/^[^@\s]+@[^@\s]+$/.test(values.email)) {
      return again(c.page.t.wrongCredentials);
    }
    if ((f.newPassword ?? "") !== (f.confirmPassword ?? "")) return again(c.page.t.passwordsDiffer);
    const problem = (await passwordRules(settings, instance.id, instance.defaultOrgId)).problem(f.newPassword ?? "", c.page.t);
    if (problem) return again(problem);
    const orgId = instance.defaultOrgId;
    try {
      const d = await createHuman(es, {
        instanceId: instance.id,
        orgId,
        creator: "",
        human: { username: values.loginName, givenName: values.givenName, familyName: values.familyName, email: values.email, emailVerified: false },
        passwordHash: await hashPassword(f.newPassword!),
        box,
      });
      const user = (await kit.users.byId(instance.id, d.id))!;
      return finish(c, reply, instance, user);
    } catch (e) {
      // taken, or on another organisation's verified domain: the name is not to be had either way
      if (usernameUnavailable(e)) {
        return again(c.page.t.usernameTaken);
      }
      if (refusedWith(e, Code.InvalidArgument)) return again(c.page.t.wrongCredentials);
      throw e;
    }
  });
}
