import { Code } from "@connectrpc/connect";
import { addTotp, mfaInitSkippedAt, skipMfaInit, verifyTotp } from "../command/totp.js";
import { inheritanceChain } from "../domain/contexts.js";
import type { InstanceRow } from "../query/tenancy.js";
import * as pages from "../web/pages.js";
import type { Finish } from "./finish.js";
import { type Ctx, continueTo, type FirstFactor, LOGIN_PATH, type LoginKit, refusedWith, type SignedInUser } from "./kit.js";

/** The TOTP set-up a sign-in may go through before it completes. */
export interface OtpSetupStep {
  /** Whether a sign-in is asked to set up a second factor: the last skip is older than `lifetimeSeconds` (0: never). */
  due(instanceId: string, userId: string, lifetimeSeconds: number): Promise<boolean>;
  /** The set-up page of a sign-in waiting for it (sealed as `pending`); with a skip when not `forced`. */
  atSignIn(c: Ctx, instance: InstanceRow, user: SignedInUser, forced: boolean, first: FirstFactor): Promise<unknown>;
}

/**
 * Setting up TOTP: enrolment for an account signed in in this browser (a new secret shown once, confirmed by a
 * code), or at a sign-in that sets up its second factor before it completes; and putting that off.
 */
export function registerOtpSetup(kit: LoginKit, finish: Finish): OtpSetupStep {
  const { es, db, box, settings } = kit.deps;

  // Enrolment, for an account signed in in this browser: a new secret shown once, confirmed by a code.
  kit.post(`${LOGIN_PATH}/otp/setup`, async (c, _reply, instance) => {
    const account = await kit.accountOf(c, instance.id);
    if (!account) return c.send(pages.loginNamePage(c.page, { canRegister: false }), 400);
    if (!(await kit.signedInRecently(c, account))) return;
    try {
      return await enrolPage(c, instance, account, { sessionId: account.sessionId });
    } catch (e) {
      // Verified already: nothing to set up.
      if (refusedWith(e, Code.AlreadyExists)) return c.send(pages.messagePage(c.page, c.page.t.otpSetup, c.page.t.otpAdded), 409);
      throw e;
    }
  });

  // The code that confirms an enrolment: of a signed-in account (sessionId), or of a sign-in that sets up its
  // second factor before it completes (pending), which then completes with both factors.
  kit.post(`${LOGIN_PATH}/otp/setup/verify`, async (c, reply, instance) => {
    const pending = c.fields.pending ? await kit.mfaInitPending(c, instance) : undefined;
    const account = pending ? undefined : await kit.accountOf(c, instance.id);
    const who = pending ? { userId: pending.user.id, loginName: pending.user.username } : account;
    if (!who) return c.send(pages.loginNamePage(c.page, { canRegister: false, error: c.page.t.wrongCredentials }), 400);
    // A wrong code shows a new secret: a set-up's start as much as the set-up page's, and as recent a sign-in.
    if (account && !(await kit.signedInRecently(c, account))) return;
    try {
      await verifyTotp(es, box, { instanceId: instance.id, userId: who.userId, creator: who.userId, code: (c.fields.code ?? "").slice(0, 20) });
    } catch (e) {
      // Confirmed already: nothing to confirm. No set-up under way is answered as a wrong code (a new secret).
      if (refusedWith(e, Code.FailedPrecondition)) return c.send(pages.messagePage(c.page, c.page.t.otpSetup, c.page.t.otpAdded), 409);
      if (!refusedWith(e, Code.InvalidArgument, Code.NotFound)) throw e;
      // A wrong code: a new secret to scan, as the shown one is not kept in the page.
      const extra: Record<string, string> = pending ? { pending: String(c.fields.pending) } : { sessionId: account!.sessionId };
      return enrolPage(c, instance, who, extra, { error: c.page.t.otpWrong, canSkip: pending ? !pending.forced : false }, 400);
    }
    if (pending) return finish(c, reply, instance, pending.user, [pending.first, "otp", "mfa"]);
    if (c.page.carry.return_to) return kit.redirect(c, reply, continueTo(c.page.carry.return_to, account!.sessionId));
    return c.send(pages.messagePage(c.page, c.page.t.otpSetup, c.page.t.otpAdded));
  });

  // Putting off the set-up, when it is not forced: the sign-in completes with the password alone.
  kit.post(`${LOGIN_PATH}/mfa/skip`, async (c, reply, instance) => {
    const pending = await kit.mfaInitPending(c, instance);
    if (!pending || pending.forced) return c.send(pages.loginNamePage(c.page, { canRegister: false, error: c.page.t.wrongCredentials }), 401);
    await skipMfaInit(es, { instanceId: instance.id, userId: pending.user.id, orgId: pending.user.orgId });
    return finish(c, reply, instance, pending.user, [pending.first]);
  });

  /** A new TOTP secret to scan (the unverified one before it is replaced), for `extra` to carry to the verification. */
  async function enrolPage(
    c: Ctx,
    instance: InstanceRow,
    who: { userId: string; loginName: string },
    extra: Record<string, string>,
    opts: { error?: string; canSkip?: boolean } = {},
    status = 200,
  ) {
    const enrolment = await addTotp(es, box, {
      instanceId: instance.id,
      userId: who.userId,
      creator: who.userId,
      issuer: instance.name,
      accountName: who.loginName,
    });
    // imported at the first enrolment, not at every start (docs/drafts/build.md, "Idle memory")
    const { default: QRCode } = await import("qrcode");
    const qrSvg = await QRCode.toString(enrolment.uri, { type: "svg", errorCorrectionLevel: "M", margin: 2 });
    const user = await kit.users.byId(instance.id, who.userId);
    const login = await settings.values("login", inheritanceChain({ type: "org", instanceId: instance.id, orgId: user?.orgId ?? "" }));
    return c.send(pages.otpSetupPage(c.page, { ...enrolment, qrSvg, extra, ...opts, keyAllowed: login.second_factors.includes("u2f") }), status);
  }

  return {
    async due(instanceId, userId, lifetimeSeconds) {
      if (lifetimeSeconds <= 0) return false;
      const skipped = await mfaInitSkippedAt(db, instanceId, userId);
      return !skipped || kit.deps.clock.now() - skipped.getTime() >= lifetimeSeconds * 1000;
    },
    atSignIn(c, instance, user, forced, first) {
      const pending = kit.sealMfaInit(user.id, instance.id, forced, first);
      return enrolPage(c, instance, { userId: user.id, loginName: user.username }, { pending }, { canSkip: !forced });
    },
  };
}
