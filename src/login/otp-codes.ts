import { isTooManyFailures, limitedSignIn } from "../command/failure-limits.js";
import { checkLoginCode, loginCodeChannel, type OtpChannel, sendLoginCode } from "../command/otp-codes.js";
import { otpCodePage } from "../web/recovery-pages.js";
import * as pages from "../web/pages.js";
import type { Finish } from "./finish.js";
import { type Ctx, firstFactorOf, LOGIN_PATH, type LoginKit, PENDING_TTL_MS, type SecondFactorStep, type SignedInUser } from "./kit.js";

/**
 * The sign-in step of one-time codes by e-mail or SMS (issue 14; ZITADEL's OTP Email / OTP SMS): after the
 * password, a user who turned a channel on, allowed by the login settings' second_factors, is sent a code and
 * types it; the sign-in completes with amr pwd, otp, mfa (ZITADEL reports these codes as "otp" too). The
 * proven password is carried as a signed, short-lived token as for the TOTP step.
 */
export function registerOtpCodes(kit: LoginKit, finish: Finish): SecondFactorStep {
  const { es, db, box, signer } = kit.deps;
  const codePage = (c: Ctx, pending: string, user: SignedInUser, channel: OtpChannel, error?: string) =>
    otpCodePage({ ...c.page, carry: { ...c.page.carry, pending } }, { loginName: user.username, channel, ...(error ? { error } : {}) });

  kit.post(`${LOGIN_PATH}/otp/code`, async (c, reply, instance) => {
    const proof = signer.open("otp-code", c.fields.pending);
    const user = proof && proof.i === instance.id ? await kit.users.byId(instance.id, String(proof.u)) : null;
    const channel = proof?.c === "email" || proof?.c === "sms" ? (proof.c as OtpChannel) : undefined;
    if (user?.state !== "active" || !channel) return c.send(pages.loginNamePage(c.page, { canRegister: false, error: c.page.t.wrongCredentials }), 401);
    const code = (c.fields.code ?? "").slice(0, 20);
    const checked = await limitedSignIn(
      c.limits,
      user.id,
      async () => (await checkLoginCode(es, box, { instanceId: instance.id, userId: user.id, channel, code })) || undefined,
    );
    if (isTooManyFailures(checked)) return c.tooMany(checked);
    if (!checked) {
      return c.send(codePage(c, String(c.fields.pending), user, channel, c.page.t.otpWrong), 401);
    }
    return finish(c, reply, instance, user, [firstFactorOf(proof), "otp", "mfa"]);
  });

  return {
    /** Sends the code and shows its page when the user has a usable channel `allowed` permits. */
    async offer(c, _reply, instance, user, allowed, first) {
      const channel = await loginCodeChannel(db, allowed, instance.id, user.id);
      if (!channel) return false;
      await sendLoginCode(es, box, { instanceId: instance.id, userId: user.id, channel });
      const pending = signer.seal("otp-code", { u: user.id, i: instance.id, c: channel, f1: first }, PENDING_TTL_MS);
      await c.send(codePage(c, pending, user, channel));
      return true;
    },
  };
}
