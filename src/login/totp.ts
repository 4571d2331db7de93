import { isTooManyFailures } from "../command/failure-limits.js";
import { checkTotp, hasVerifiedTotp } from "../command/totp.js";
import * as pages from "../web/pages.js";
import type { Finish } from "./finish.js";
import { firstFactorOf, LOGIN_PATH, type LoginKit, PENDING_TTL_MS, type SecondFactorStep } from "./kit.js";

/**
 * The TOTP step after the password (second factor "otp"): a user with a verified authenticator types a code;
 * the proven password is carried as a signed, short-lived token. The sign-in completes with amr pwd, otp, mfa.
 */
export function registerTotp(kit: LoginKit, finish: Finish): SecondFactorStep {
  const { es, db, box, replay, signer } = kit.deps;

  kit.post(`${LOGIN_PATH}/otp`, async (c, reply, instance) => {
    const proof = signer.open("otp", c.fields.pending);
    const user = proof && proof.i === instance.id ? await kit.users.byId(instance.id, String(proof.u)) : null;
    if (user?.state !== "active") return c.send(pages.loginNamePage(c.page, { canRegister: false, error: c.page.t.wrongCredentials }), 401);
    const checked = await checkTotp(es, db, box, replay, {
      ...kit.lockoutOf(instance.id),
      user,
      code: (c.fields.code ?? "").slice(0, 20),
      limits: c.limits,
    });
    if (isTooManyFailures(checked)) return c.tooMany(checked);
    if (!checked) {
      return c.send(
        pages.otpPage({ ...c.page, carry: { ...c.page.carry, pending: String(c.fields.pending) } }, { loginName: user.username, error: c.page.t.otpWrong }),
        401,
      );
    }
    return finish(c, reply, instance, user, [firstFactorOf(proof), "otp", "mfa"]);
  });

  return {
    async offer(c, _reply, instance, user, allowed, first) {
      if (!allowed.includes("otp") || !(await hasVerifiedTotp(db, instance.id, user.id))) return false;
      const pending = signer.seal("otp", { u: user.id, i: instance.id, f1: first }, PENDING_TTL_MS);
      await c.send(pages.otpPage({ ...c.page, carry: { ...c.page.carry, pending } }, { loginName: user.username }));
      return true;
    },
  };
}
