import type { FastifyReply } from "fastify";
import { isTooManyFailures, limitedSignIn } from "../command/failure-limits.js";
import { checkLoginCode, loginCodeChannel, type OtpChannel, sendLoginCode } from "../command/otp-codes.js";
import type { InstanceRow } from "../query/tenancy.js";
import { UserQueries } from "../query/users.js";
import * as pages from "../web/pages.js";
import { otpCodePage } from "../web/recovery-pages.js";
import type { RecoveryPageContext } from "./recovery.js";
import type { LoginDeps } from "./routes.js";

/** A sign-in waiting for its one-time code is good for this long (the code itself for five minutes). */
const PENDING_TTL_MS = 10 * 60_000;

type SignedInUser = { id: string; orgId: string; username: string; displayName: string };

export interface OtpCodeKit<C extends RecoveryPageContext> {
  post(path: string, handler: (c: C, reply: FastifyReply, instance: InstanceRow) => Promise<unknown>): void;
  /** Completes the sign-in with the methods used. */
  finish(c: C, reply: FastifyReply, instance: InstanceRow, user: SignedInUser, amr: string[]): Promise<unknown>;
}

/**
 * The sign-in step of one-time codes by e-mail or SMS (issue 14; ZITADEL's OTP Email / OTP SMS): after the
 * password, a user who turned a channel on, allowed by the login settings' second_factors, is sent a code and
 * types it; the sign-in completes with amr pwd, otp, mfa (ZITADEL reports these codes as "otp" too). The
 * proven password is carried as a signed, short-lived token as for the TOTP step.
 */
export function registerOtpCodePages<C extends RecoveryPageContext>(deps: LoginDeps, kit: OtpCodeKit<C>) {
  const { es, db, box, signer } = deps;
  const users = new UserQueries(db, deps.cache);
  const codePage = (c: C, pending: string, user: SignedInUser, channel: OtpChannel, error?: string) =>
    otpCodePage({ ...c.page, carry: { ...c.page.carry, pending } }, { loginName: user.username, channel, ...(error ? { error } : {}) });

  kit.post("/ui/login/otp/code", async (c, reply, instance) => {
    const proof = signer.open("otp-code", c.fields.pending);
    const user = proof && proof.i === instance.id ? await users.byId(instance.id, String(proof.u)) : null;
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
    return kit.finish(c, reply, instance, user, ["pwd", "otp", "mfa"]);
  });

  return {
    /**
     * Sends the code and shows its page when the user has a usable channel `allowed` permits: whether it did
     * (a sent reply is no value to test: awaited, it is undefined).
     */
    async offer(c: C, instance: InstanceRow, user: SignedInUser, allowed: readonly string[]): Promise<boolean> {
      const channel = await loginCodeChannel(db, allowed, instance.id, user.id);
      if (!channel) return false;
      await sendLoginCode(es, box, { instanceId: instance.id, userId: user.id, channel });
      const pending = signer.seal("otp-code", { u: user.id, i: instance.id, c: channel }, PENDING_TTL_MS);
      await c.send(codePage(c, pending, user, channel));
      return true;
    },
  };
}
