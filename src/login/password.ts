import type { FastifyReply } from "fastify";
import { isTooManyFailures } from "../command/failure-limits.js";
import { checkPassword } from "../command/login.js";
import { setPassword } from "../command/users.js";
import { hashPassword } from "../crypto/password.js";
import { inheritanceChain } from "../domain/contexts.js";
import { passwordRules } from "../query/password-rules.js";
import type { InstanceRow } from "../query/tenancy.js";
import * as pages from "../web/pages.js";
import type { Finish } from "./finish.js";
import { type Ctx, type FirstFactor, isLocalFactor, LOGIN_PATH, type LoginKit, PENDING_TTL_MS, type SecondFactorStep, type SignedInUser } from "./kit.js";
import type { OtpSetupStep } from "./otp-setup.js";

export interface PasswordStepNeeds {
  finish: Finish;
  /** The second factors' steps, in the order they are offered. */
  secondFactors: readonly SecondFactorStep[];
  /** The TOTP set-up a sign-in may have to go through (forced, or asked when due). */
  otpSetup: OtpSetupStep;
  /** A forced second factor when security keys are the only one allowed: register one before the sign-in completes. */
  keySetupAtSignIn(c: Ctx, reply: FastifyReply, instance: InstanceRow, user: SignedInUser, pending: string): Promise<unknown>;
}

/**
 * The password step (and the change it may require), then the second factor or its set-up, then the finish.
 * `afterFirstFactor` is the same way on for a sign-in through an external identity provider.
 */
export function registerPassword(kit: LoginKit, needs: PasswordStepNeeds): { afterFirstFactor: AfterFirstFactor } {
  const { es, db, settings, signer } = kit.deps;

  kit.post(`${LOGIN_PATH}/password`, async (c, reply, instance) => {
    const loginName = (c.fields.loginName ?? "").trim().slice(0, 200);
    const user = await checkPassword(es, db, {
      ...kit.lockoutOf(instance.id),
      user: { loginName, settings },
      password: (c.fields.password ?? "").slice(0, 1000),
      limits: c.limits,
    });
    if (isTooManyFailures(user)) return c.tooMany(user);
    if (!user) return c.send(pages.passwordPage(c.page, { loginName, error: c.page.t.wrongCredentials }), 401);
    if (user.passwordChangeRequired) {
      const pending = signer.seal("password-change", { u: user.id, i: instance.id }, PENDING_TTL_MS);
      return c.send(pages.changePasswordPage({ ...c.page, carry: { ...c.page.carry, pending } }, {}));
    }
    return afterFirstFactor(c, reply, instance, user, "pwd");
  });

  kit.post(`${LOGIN_PATH}/password/change`, async (c, reply, instance) => {
    const proof = signer.open("password-change", c.fields.pending);
    const user = proof && proof.i === instance.id ? await kit.users.byId(instance.id, String(proof.u)) : null;
    if (user?.state !== "active") return c.send(pages.loginNamePage(c.page, { canRegister: false, error: c.page.t.wrongCredentials }), 401);
    const again = (error: string) =>
      c.send(pages.changePasswordPage({ ...c.page, carry: { ...c.page.carry, pending: String(c.fields.pending) } }, { error }), 400);
    const password = c.fields.newPassword ?? "";
    if (password !== (c.fields.confirmPassword ?? "")) return again(c.page.t.passwordsDiffer);
    const problem = (await passwordRules(settings, instance.id, user.orgId)).problem(password, c.page.t);
    if (problem) return again(problem);
    await setPassword(es, { instanceId: instance.id, id: user.id, creator: user.id, passwordHash: await hashPassword(password), changeRequired: false });
    return afterFirstFactor(c, reply, instance, user, "pwd");
  });

  /**
   * After the first factor (a password, or an external identity provider): a user with a second factor proves
   * it next (every sign-in, so prompt=login and max_age ask for both factors again), the step carrying the first
   * one sealed and short-lived.
   */
  async function afterFirstFactor(c: Ctx, reply: FastifyReply, instance: InstanceRow, user: SignedInUser, first: FirstFactor) {
    const login = await settings.values("login", inheritanceChain({ type: "org", instanceId: instance.id, orgId: user.orgId }));
    const otpAllowed = login.second_factors.includes("otp");
    // A second factor the user has (a verified TOTP authenticator, a security key, a code channel): its step's
    // page, and the sign-in waits for it.
    for (const step of needs.secondFactors) {
      if (await step.offer(c, reply, instance, user, login.second_factors, first)) return;
    }
    // No second factor yet. Forced (force_mfa_local_only forces it for local passwords only, as in ZITADEL): set
    // one up before the sign-in completes. Else asked, with a skip, when the last skip is older than
    // mfa_init_skip_lifetime (0: never asked).
    const forced = login.force_mfa || (isLocalFactor(first) && login.force_mfa_local_only);
    if (otpAllowed && (forced || (await needs.otpSetup.due(instance.id, user.id, login.mfa_init_skip_lifetime)))) {
      return needs.otpSetup.atSignIn(c, instance, user, forced, first);
    }
    if (forced && login.second_factors.includes("u2f")) {
      return needs.keySetupAtSignIn(c, reply, instance, user, kit.sealMfaInit(user.id, instance.id, forced, first));
    }
    if (forced) return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.mfaUnavailable), 403);
    return needs.finish(c, reply, instance, user, [first]);
  }

  return { afterFirstFactor };
}

/** The way on after a proven first factor: a second factor (or its set-up) when the user has one or must, then the finish. */
export type AfterFirstFactor = (c: Ctx, reply: FastifyReply, instance: InstanceRow, user: SignedInUser, first: FirstFactor) => Promise<unknown>;
