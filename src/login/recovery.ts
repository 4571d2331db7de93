import type { FastifyReply, FastifyRequest } from "fastify";
import { isTooManyFailures, limitedSignIn } from "../command/failure-limits.js";
import { changePasswordWithCurrent } from "../command/login.js";
import {
  codeEvents,
  codeWorked,
  newCode,
  passwordCodeValid,
  requestPasswordCode,
  setPasswordWithCode,
  unlockWithCode,
  verifyCode,
} from "../command/user-codes.js";
import { hashPassword } from "../crypto/password.js";
import { addressKey } from "../domain/client-address.js";
import { passwordRules } from "../query/password-rules.js";
import type { InstanceRow } from "../query/tenancy.js";
import { userByLoginName } from "../query/users.js";
import * as pages from "../web/pages.js";
import * as recoveryPages from "../web/recovery-pages.js";
import { type Ctx, LOGIN_PATH, type LoginKit } from "./kit.js";

/** The forgot-password answer takes this long, found or not, so its timing says nothing either. */
export const RESET_ANSWER_MS = 300;

/**
 * A code step under the sign-in failure limits: `attempt` answers whether the code worked; `invalid` answers the
 * request when not. True when the request was answered here (the code failed, or too many failures): a page sent
 * is no value to test (an awaited reply resolves to undefined), hence the boolean.
 */
async function answeredFailure(c: Ctx, userId: string, attempt: () => Promise<boolean>, invalid: () => unknown): Promise<boolean> {
  const outcome = await limitedSignIn(c.limits, userId || undefined, async () => (await attempt()) || undefined);
  if (outcome === true) return false;
  await (isTooManyFailures(outcome) ? c.tooMany(outcome) : invalid());
  return true;
}

/**
 * The login UI's verification and recovery pages (issue 14): verify an e-mail address with the mailed link or
 * the typed code, set the initial password from its mailed link, "forgot password" (request and link), change
 * the password of a signed-in account, and unlock a locked one.
 */
export function registerRecovery(kit: LoginKit): void {
  const { ui, deps } = kit;
  const { es, db, settings, box } = deps;
  const field = (c: Ctx, name: string, max = 200) => (c.fields[name] ?? "").slice(0, max);

  /** A GET that uses a code counts against the address like a form post (same key), so links cannot be guessed faster. */
  async function limited(req: FastifyRequest, reply: FastifyReply, c: Ctx): Promise<boolean> {
    const rule = deps.rateLimit?.address;
    if (!rule) return false;
    const verdict = await deps.rateLimit!.limiter.hit(`login:addr:${addressKey(req.client.address)}`, rule);
    if (verdict.allowed) return false;
    reply.header("retry-after", String(verdict.retryAfterS));
    c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.tooManyRequests), 429);
    return true;
  }

  // E-mail verification: the mailed link (code in the query) verifies at once; the form takes a typed code.
  async function verifyEmail(c: Ctx, instance: InstanceRow) {
    const userId = field(c, "userId");
    const code = field(c, "code", 40);
    const failed = await answeredFailure(
      c,
      userId,
      () => codeWorked(verifyCode(es, box, { instanceId: instance.id, userId, creator: userId, kind: "email", code, field: "code" })),
      () => c.send(recoveryPages.verifyEmailPage(c.page, { userId, code, error: c.page.t.codeInvalid }), 400),
    );
    if (failed) return;
    return c.send(recoveryPages.doneWithSignInPage(c.page, c.page.t.emailVerifyTitle, c.page.t.emailVerified));
  }

  ui.get(`${LOGIN_PATH}/email/verify`, async (req, reply) => {
    const c = await kit.contextOf(req, reply);
    if (!c.instance || !c.fields.userId) return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.notFound), 404);
    if (!c.fields.code) return c.send(recoveryPages.verifyEmailPage(c.page, { userId: field(c, "userId") }));
    if (await limited(req, reply, c)) return reply;
    return verifyEmail(c, c.instance);
  });
  kit.post(`${LOGIN_PATH}/email/verify`, (c, _reply, instance) => verifyEmail(c, instance));

  // The links to set a password (initial or reset): the page shows its form only for a valid code.
  const linkInvalid = (c: Ctx) => c.send(recoveryPages.doneWithSignInPage(c.page, c.page.t.setPasswordTitle, c.page.t.linkInvalid), 400);
  const showSetPassword = async (req: FastifyRequest, reply: FastifyReply, c: Ctx, action: string) => {
    if (!c.instance) return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.notFound), 404);
    if (await limited(req, reply, c)) return reply;
    const userId = field(c, "userId");
    const code = field(c, "code", 40);
    const instanceId = c.instance.id;
    const failed = await answeredFailure(
      c,
      userId,
      () => passwordCodeValid(es, box, { instanceId, userId, creator: userId, code }),
      () => linkInvalid(c),
    );
    if (failed) return;
    return c.send(recoveryPages.setPasswordPage(c.page, { action, userId, code }));
  };
  const setPassword = async (c: Ctx, instance: InstanceRow, action: string) => {
    const userId = field(c, "userId");
    const code = field(c, "code", 40);
    const user = await kit.users.byId(instance.id, userId);
    if (!user) return linkInvalid(c);
    const again = (error: string) => c.send(recoveryPages.setPasswordPage(c.page, { action, userId, code, error }), 400);
    const password = field(c, "newPassword", 1000);
    if (password !== field(c, "confirmPassword", 1000)) return again(c.page.t.passwordsDiffer);
    const problem = (await passwordRules(settings, instance.id, user.orgId)).problem(password, c.page.t);
    if (problem) return again(problem);
    const passwordHash = await hashPassword(password);
    const failed = await answeredFailure(
      c,
      userId,
      () => codeWorked(setPasswordWithCode(es, box, { instanceId: instance.id, userId, creator: userId, code, passwordHash, field: "code" })),
      () => linkInvalid(c),
    );
    if (failed) return;
    return c.send(recoveryPages.doneWithSignInPage(c.page, c.page.t.setPasswordTitle, c.page.t.passwordSet));
  };

  ui.get(`${LOGIN_PATH}/password/init`, async (req, reply) => showSetPassword(req, reply, await kit.contextOf(req, reply), `${LOGIN_PATH}/password/init`));
  kit.post(`${LOGIN_PATH}/password/init`, (c, _reply, instance) => setPassword(c, instance, `${LOGIN_PATH}/password/init`));

  // Forgot password: without a code in the link, the page asks the login name.
  ui.get(`${LOGIN_PATH}/password/reset`, async (req, reply) => {
    const c = await kit.contextOf(req, reply);
    if (c.fields.userId || c.fields.code) return showSetPassword(req, reply, c, `${LOGIN_PATH}/password/reset`);
    return c.send(recoveryPages.resetRequestPage(c.page, { loginName: field(c, "loginName") }));
  });
  kit.post(`${LOGIN_PATH}/password/reset`, (c, _reply, instance) => setPassword(c, instance, `${LOGIN_PATH}/password/reset`));

  // The same answer after RESET_ANSWER_MS, whether or not the account exists or can get a mail. The lookup and
  // the code run beside the wait and are not awaited by the answer: a write that is slow on a loaded server would
  // otherwise make the answer for a real account later than for an unknown name. A login name without an
  // account still makes and seals a code, so the work done is alike too. Close waits for work still running.
  const resetWork = new Set<Promise<void>>();
  ui.addHook("onClose", async () => {
    await Promise.allSettled([...resetWork]);
  });
  kit.post(`${LOGIN_PATH}/password/reset/request`, async (c, _reply, instance) => {
    const loginName = field(c, "loginName").trim();
    const work = (async () => {
      const user = await userByLoginName(db, instance.id, loginName, settings);
      if (user?.kind === "human" && user.email && user.state !== "inactive") {
        await requestPasswordCode(es, box, { instanceId: instance.id, userId: user.id, creator: user.id, reason: "reset" });
      } else {
        codeEvents.password(box, es.clock.now(), newCode("password"), "reset");
      }
    })().catch((e: unknown) => ui.log.error({ err: e }, "forgot-password request failed"));
    resetWork.add(work);
    void work.finally(() => resetWork.delete(work));
    await new Promise((r) => setTimeout(r, RESET_ANSWER_MS));
    return c.send(recoveryPages.doneWithSignInPage(c.page, c.page.t.resetTitle, c.page.t.resetSent));
  });

  // Change password when signed in: the account is one of this browser's sessions; the current password proves it.
  ui.get(`${LOGIN_PATH}/password/edit`, async (req, reply) => {
    const c = await kit.contextOf(req, reply);
    const account = c.instance ? await kit.accountOf(c, c.instance.id) : undefined;
    if (!account) return c.send(pages.loginNamePage(c.page, { canRegister: false }), 400);
    return c.send(recoveryPages.editPasswordPage(c.page, { sessionId: account.sessionId, loginName: account.loginName }));
  });
  kit.post(`${LOGIN_PATH}/password/edit`, async (c, _reply, instance) => {
    const account = await kit.accountOf(c, instance.id);
    if (!account) return c.send(pages.loginNamePage(c.page, { canRegister: false }), 400);
    const again = (error: string) => c.send(recoveryPages.editPasswordPage(c.page, { sessionId: account.sessionId, loginName: account.loginName, error }), 400);
    const password = field(c, "newPassword", 1000);
    if (password !== field(c, "confirmPassword", 1000)) return again(c.page.t.passwordsDiffer);
    const user = await kit.users.byId(instance.id, account.userId);
    if (!user) throw new Error(`the signed-in user ${account.userId} is not found`);
    const problem = (await passwordRules(settings, instance.id, user.orgId)).problem(password, c.page.t);
    if (problem) return again(problem);
    const passwordHash = await hashPassword(password);
    const currentPassword = field(c, "currentPassword", 1000);
    const failed = await answeredFailure(
      c,
      user.id,
      // the limits count here (answeredFailure), the lockout in the check
      () => codeWorked(changePasswordWithCurrent(es, db, { ...kit.lockoutOf(instance.id), userId: user.id, creator: user.id, currentPassword, passwordHash })),
      () => again(c.page.t.currentPasswordWrong),
    );
    if (failed) return;
    return c.send(pages.messagePage(c.page, c.page.t.changePassword, c.page.t.passwordChanged));
  });

  // The unlock link of the lock mail: the page asks for a click, the post unlocks.
  ui.get(`${LOGIN_PATH}/unlock`, async (req, reply) => {
    const c = await kit.contextOf(req, reply);
    if (!c.instance) return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.notFound), 404);
    return c.send(recoveryPages.unlockPage(c.page, { userId: field(c, "userId"), code: field(c, "code", 40) }));
  });
  kit.post(`${LOGIN_PATH}/unlock`, async (c, _reply, instance) => {
    const userId = field(c, "userId");
    const failed = await answeredFailure(
      c,
      userId,
      () => codeWorked(unlockWithCode(es, box, { instanceId: instance.id, userId, creator: userId, code: field(c, "code", 40) })),
      () => c.send(recoveryPages.doneWithSignInPage(c.page, c.page.t.unlockTitle, c.page.t.linkInvalid), 400),
    );
    if (failed) return;
    return c.send(recoveryPages.doneWithSignInPage(c.page, c.page.t.unlockTitle, c.page.t.unlocked));
  });
}
