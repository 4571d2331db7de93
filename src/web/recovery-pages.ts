import { errorBox, esc, field, form, layout, type PageContext } from "./pages.js";

// Pages of the verification and recovery flows (src/login/recovery.ts).

const newPasswordFields = (p: PageContext) =>
  field("newPassword", p.t.newPassword, "password", 'autocomplete="new-password" required autofocus') +
  field("confirmPassword", p.t.confirmPassword, "password", 'autocomplete="new-password" required');

/** The code from the verification mail, typed; `userId` names whose. */
export function verifyEmailPage(p: PageContext, opts: { userId: string; code?: string; error?: string }): string {
  return layout(
    p,
    p.t.emailVerifyTitle,
    `<p>${esc(p.t.emailVerifyIntro)}</p>` +
      errorBox(opts.error) +
      form(
        p,
        "/ui/login/email/verify",
        `${field("code", p.t.otpCode, "text", `value="${esc(opts.code ?? "")}" autocomplete="one-time-code" required autofocus`)}<button type="submit">${esc(p.t.verify)}</button>`,
        { userId: opts.userId },
      ),
  );
}

/** Asks the login name whose password to reset. */
export function resetRequestPage(p: PageContext, opts: { loginName?: string }): string {
  return layout(
    p,
    p.t.resetTitle,
    `<p>${esc(p.t.resetIntro)}</p>` +
      form(
        p,
        "/ui/login/password/reset/request",
        `${field("loginName", p.t.loginName, "text", `value="${esc(opts.loginName ?? "")}" autocomplete="username" required autofocus`)}<button type="submit">${esc(p.t.next)}</button>`,
      ),
  );
}

/** A new password set with a mailed code (`action`: the init or the reset page, which post the same fields). */
export function setPasswordPage(p: PageContext, opts: { action: string; userId: string; code: string; error?: string }): string {
  return layout(
    p,
    p.t.setPasswordTitle,
    errorBox(opts.error) +
      form(p, opts.action, `${newPasswordFields(p)}<button type="submit">${esc(p.t.save)}</button>`, { userId: opts.userId, code: opts.code }),
  );
}

/** A signed-in account's new password, proven by the current one. */
export function editPasswordPage(p: PageContext, opts: { sessionId: string; loginName: string; error?: string }): string {
  return layout(
    p,
    p.t.changePassword,
    `<p class="who">${esc(opts.loginName)}</p>` +
      errorBox(opts.error) +
      form(
        p,
        "/ui/login/password/edit",
        `<input type="text" name="loginName" value="${esc(opts.loginName)}" autocomplete="username" hidden readonly>${field("currentPassword", p.t.currentPassword, "password", 'autocomplete="current-password" required autofocus')}${newPasswordFields(p)}<button type="submit">${esc(p.t.save)}</button>`,
        { sessionId: opts.sessionId },
      ),
  );
}

/** A result, with a link to sign in. */
export function doneWithSignInPage(p: PageContext, title: string, message: string): string {
  return layout(p, title, `<p>${esc(message)}</p><p><a href="/ui/login?${new URLSearchParams(p.carry)}">${esc(p.t.signIn)}</a></p>`);
}

/** The unlock link's page: a button, so that a mail scanner opening the link unlocks nothing. */
export function unlockPage(p: PageContext, opts: { userId: string; code: string }): string {
  return layout(
    p,
    p.t.unlockTitle,
    `<p>${esc(p.t.unlockIntro)}</p>` +
      form(p, "/ui/login/unlock", `<button type="submit">${esc(p.t.unlock)}</button>`, { userId: opts.userId, code: opts.code }),
  );
}

/** The second step of a sign-in with a one-time code by e-mail or SMS; `pending` (in carry) holds the first. */
export function otpCodePage(p: PageContext, opts: { loginName: string; channel: "email" | "sms"; error?: string }): string {
  return layout(
    p,
    p.t.otpCodeTitle,
    `<p class="who">${esc(opts.loginName)}</p><p>${esc(opts.channel === "email" ? p.t.otpEmailIntro : p.t.otpSmsIntro)}</p>` +
      errorBox(opts.error) +
      form(
        p,
        "/ui/login/otp/code",
        `${field("code", p.t.otpCode, "text", 'inputmode="numeric" pattern="[0-9 ]*" autocomplete="one-time-code" required autofocus')}<button type="submit">${esc(p.t.next)}</button>`,
      ),
  );
}
