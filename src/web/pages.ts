import type { Texts } from "./texts.js";

/** HTML escaping for text and attribute values: every page value goes through it. */
export function esc(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

export interface PageContext {
  lang: string;
  t: Texts;
  csrf: string;
  /** Hidden fields carried from page to page (the flow's return address, ui_locales, login hint). */
  carry: Record<string, string>;
  /** The branding hides the product's "Secured by" line. */
  hideProduct?: boolean;
  /** The branding's logo and icon: SHA-256 of assets served under /ui/login/assets/. */
  logo?: string | undefined;
  logoDark?: string | undefined;
  icon?: string | undefined;
  /** The organisation whose branding the page shows (the request named it), for branding.css. */
  brandingOrg?: string | undefined;
}

const hidden = (name: string, value: string) => `<input type="hidden" name="${esc(name)}" value="${esc(value)}">`;

export function form(p: PageContext, action: string, body: string, extra: Record<string, string> = {}): string {
  const fields = Object.entries({ ...p.carry, ...extra })
    .map(([k, v]) => hidden(k, v))
    .join("");
  return `<form method="post" action="${esc(action)}">${hidden("csrf", p.csrf)}${fields}${body}</form>`;
}

export const field = (name: string, label: string, type: string, attrs = "") =>
  `<label for="${name}">${esc(label)}</label><input id="${name}" name="${name}" type="${type}" ${attrs}>`;

type Branded = Pick<PageContext, "lang" | "t" | "hideProduct" | "logo" | "logoDark" | "icon" | "brandingOrg">;

export function layout(p: Branded, title: string, body: string, head = ""): string {
  const product = p.hideProduct ? "" : `<footer class="product">${esc(p.t.securedBy)} svc IAM</footer>`;
  const asset = (sha: string) => `/ui/login/assets/${esc(sha)}`;
  const icon = p.icon ? `<link rel="icon" href="${asset(p.icon)}">` : "";
  const img = p.logo ? `<img class="logo" src="${asset(p.logo)}" alt="">` : "";
  // The dark logo where the browser prefers dark colours (and the branding's theme mode lets it: see branding.css).
  const logo = img && p.logoDark ? `<picture><source srcset="${asset(p.logoDark)}" media="(prefers-color-scheme: dark)">${img}</picture>` : img;
  // branding.css (the instance's or the organisation's colours as CSS variables) after the base stylesheet that uses them.
  const branding = `/ui/login/branding.css${p.brandingOrg ? `?org=${encodeURIComponent(p.brandingOrg)}` : ""}`;
  return `<!doctype html><html lang="${esc(p.lang)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${esc(title)}</title><link rel="stylesheet" href="/ui/login/style.css"><link rel="stylesheet" href="${esc(branding)}">${icon}${head}</head><body><main>${logo}<h1>${esc(title)}</h1>${body}</main>${product}</body></html>`;
}

export const errorBox = (message?: string) => (message ? `<p class="error" role="alert">${esc(message)}</p>` : "");

export function loginNamePage(
  p: PageContext,
  opts: { error?: string; loginName?: string; canRegister: boolean; passkey?: boolean; providers?: { id: string; name: string }[] },
): string {
  // One form per identity provider: a POST with the CSRF token starts the round trip (no script, no GET that starts it).
  const providers = opts.providers?.length
    ? `<p>${esc(p.t.orSignInWith)}</p>${opts.providers.map((i) => form(p, "/ui/login/idp/start", `<button type="submit" class="idp">${esc(i.name)}</button>`, { idpId: i.id })).join("")}`
    : "";
  const register = opts.canRegister ? `<p><a href="/ui/login/register?${new URLSearchParams(p.carry)}">${esc(p.t.register)}</a></p>` : "";
  const passkey = opts.passkey ? `<p><a id="passkey" href="/ui/login/passkey?${new URLSearchParams(p.carry)}">${esc(p.t.passkeySignIn)}</a></p>` : "";
  return layout(
    p,
    p.t.title,
    errorBox(opts.error) +
      form(
        p,
        "/ui/login/loginname",
        `${field("loginName", p.t.loginName, "text", `value="${esc(opts.loginName ?? "")}" autocomplete="username" required autofocus`)}<button type="submit">${esc(p.t.next)}</button>`,
      ) +
      passkey +
      providers +
      register,
  );
}

export function passwordPage(p: PageContext, opts: { loginName: string; error?: string }): string {
  return layout(
    p,
    p.t.title,
    `<p class="who">${esc(opts.loginName)}</p>` +
      errorBox(opts.error) +
      form(
        p,
        "/ui/login/password",
        `<input type="text" name="loginName" value="${esc(opts.loginName)}" autocomplete="username" hidden readonly>${field("password", p.t.password, "password", 'autocomplete="current-password" required autofocus')}<button type="submit">${esc(p.t.signIn)}</button>`,
      ) +
      `<p><a href="/ui/login/password/reset?${new URLSearchParams({ ...p.carry, loginName: opts.loginName })}">${esc(p.t.forgotPassword)}</a></p>`,
  );
}

/**
 * A form that posts `fields` to another site (a SAML request to an identity provider), with a button: no script
 * submits it, since the pages' content security policy allows none inline.
 */
export function postFormHtml(action: string, fields: Record<string, string>, label: string): string {
  const hiddenFields = Object.entries(fields)
    .map(([k, v]) => hidden(k, v))
    .join("");
  return `<form method="post" action="${esc(action)}">${hiddenFields}<button type="submit" id="continue">${esc(label)}</button></form>`;
}

/**
 * The page that moves the browser on from a provider's callback to a page of the login UI (`url`, this server's):
 * a navigation this page starts is same-site, so it carries the login UI's SameSite=Strict cookies (its CSRF
 * cookie), which the provider's cross-site redirect to the callback did not. A refresh, no script; a link too.
 */
export function continuePage(p: PageContext, url: string): string {
  return layout(p, p.t.title, `<p><a href="${esc(url)}">${esc(p.t.next)}</a></p>`, `<meta http-equiv="refresh" content="0;url=${esc(url)}">`);
}

/** The page that sends the browser on to an identity provider by a form (SAML's HTTP-POST binding). */
export function toProviderPage(p: PageContext, form: { action: string; fields: Record<string, string> }): string {
  return layout(p, p.t.title, `<p>${esc(p.t.toProvider)}</p>${postFormHtml(form.action, form.fields, p.t.next)}`);
}

/**
 * An account at a provider that no account here is linked to, with the choices its options allow: sign in with
 * an existing account here to link it, and/or create one from the form the provider's answer filled.
 */
export function externalAccountPage(
  p: PageContext,
  opts: {
    pending: string;
    provider: string;
    link: boolean;
    create: { username: string; givenName: string; familyName: string; email: string } | undefined;
    error?: string;
  },
): string {
  const link = opts.link
    ? `<h2>${esc(p.t.externalLinkExisting)}</h2>` +
      form(
        p,
        "/ui/login/idp/link",
        `${field("loginName", p.t.loginName, "text", 'autocomplete="username" required')}${field("password", p.t.password, "password", 'autocomplete="current-password" required')}<button type="submit" id="link-account">${esc(p.t.externalLinkExisting)}</button>`,
        { pending: opts.pending },
      )
    : "";
  const c = opts.create;
  const create = c
    ? `<h2>${esc(p.t.externalCreateAccount)}</h2>` +
      form(
        p,
        "/ui/login/idp/register",
        `${field("username", p.t.loginName, "text", `required value="${esc(c.username)}"`)}${field("givenName", p.t.givenName, "text", `required value="${esc(c.givenName)}"`)}${field("familyName", p.t.familyName, "text", `required value="${esc(c.familyName)}"`)}${field("email", p.t.email, "email", `required value="${esc(c.email)}"`)}<button type="submit" id="create-account">${esc(p.t.externalCreateAccount)}</button>`,
        { pending: opts.pending },
      )
    : "";
  return layout(p, p.t.title, `<p>${esc(p.t.externalNotLinked)} ${esc(opts.provider)}</p>${errorBox(opts.error)}${link}${create}`);
}

/**
 * The prompt of a provider's `auto_linking`: an account here matches the external one (its login name shown); the
 * user links it and goes on, or goes on as if none had matched.
 */
export function linkPromptPage(p: PageContext, opts: { pending: string; provider: string; loginName: string }): string {
  const buttons =
    `<button type="submit" name="choice" value="link" id="link-found">${esc(p.t.externalLinkPromptLink)}</button>` +
    `<button type="submit" name="choice" value="other" id="link-other" class="account">${esc(p.t.otherAccount)}</button>`;
  return layout(
    p,
    p.t.externalLinkPromptTitle,
    `<p>${esc(p.t.externalLinkPromptIntro)} ${esc(opts.provider)}</p><p class="who">${esc(opts.loginName)}</p>` +
      form(p, "/ui/login/idp/autolink", buttons, { pending: opts.pending }),
  );
}

/** The sign-in form of a directory (an LDAP provider): its login name and password, checked there. */
export function directoryPage(p: PageContext, opts: { idpId: string; name: string; loginName?: string; error?: string }): string {
  return layout(
    p,
    p.t.title,
    `<p>${esc(p.t.directorySignIn)} ${esc(opts.name)}</p>` +
      errorBox(opts.error) +
      form(
        p,
        "/ui/login/ldap",
        `${field("loginName", p.t.loginName, "text", `autocomplete="username" required autofocus value="${esc(opts.loginName ?? "")}"`)}${field("password", p.t.password, "password", 'autocomplete="current-password" required')}<button type="submit">${esc(p.t.signIn)}</button>`,
        { idpId: opts.idpId },
      ),
  );
}

export function changePasswordPage(p: PageContext, opts: { error?: string }): string {
  return layout(
    p,
    p.t.changePassword,
    `<p>${esc(p.t.changePasswordIntro)}</p>` +
      errorBox(opts.error) +
      form(
        p,
        "/ui/login/password/change",
        `${field("newPassword", p.t.newPassword, "password", 'autocomplete="new-password" required autofocus')}${field("confirmPassword", p.t.confirmPassword, "password", 'autocomplete="new-password" required')}<button type="submit">${esc(p.t.save)}</button>`,
      ),
  );
}

export function accountsPage(p: PageContext, accounts: { sessionId: string; loginName: string; displayName: string }[]): string {
  const items = accounts
    .map(
      (a) =>
        `<li>${form(p, "/ui/login/select", `<button type="submit" class="account">${esc(a.displayName)} <small>${esc(a.loginName)}</small></button>`, { sessionId: a.sessionId })}</li>`,
    )
    .join("");
  return layout(
    p,
    p.t.chooseAccount,
    `<ul class="accounts">${items}</ul><p><a href="/ui/login?${new URLSearchParams({ ...p.carry, prompt: "login" })}">${esc(p.t.otherAccount)}</a></p>`,
  );
}

export function registerPage(p: PageContext, opts: { error?: string; values?: Record<string, string> }): string {
  const v = (k: string) => `value="${esc(opts.values?.[k] ?? "")}"`;
  return layout(
    p,
    p.t.registerTitle,
    errorBox(opts.error) +
      form(
        p,
        "/ui/login/register",
        field("givenName", p.t.givenName, "text", `${v("givenName")} required autocomplete="given-name"`) +
          field("familyName", p.t.familyName, "text", `${v("familyName")} required autocomplete="family-name"`) +
          field("email", p.t.email, "email", `${v("email")} required autocomplete="email"`) +
          field("loginName", p.t.loginName, "text", `${v("loginName")} required autocomplete="username"`) +
          field("newPassword", p.t.password, "password", 'required autocomplete="new-password"') +
          field("confirmPassword", p.t.confirmPassword, "password", 'required autocomplete="new-password"') +
          `<button type="submit">${esc(p.t.register)}</button>`,
      ),
  );
}

export function signedInPage(p: PageContext, account: { loginName: string; displayName: string; sessionId?: string }): string {
  const changePassword = account.sessionId
    ? `<p><a href="/ui/login/password/edit?${new URLSearchParams({ ...p.carry, sessionId: account.sessionId })}">${esc(p.t.changePassword)}</a></p>`
    : "";
  const otp = account.sessionId ? form(p, "/ui/login/otp/setup", `<button type="submit">${esc(p.t.otpSetup)}</button>`, { sessionId: account.sessionId }) : "";
  const keys = account.sessionId ? webauthnSetupButtons(p, { sessionId: account.sessionId }) : "";
  return layout(
    p,
    p.t.signedInAs,
    `<p class="who">${esc(account.displayName)} <small>${esc(account.loginName)}</small></p>${otp}${keys}${changePassword}<p><a href="/ui/login/logout">${esc(p.t.logout)}</a></p>`,
  );
}

/** The second step of a sign-in with a TOTP authenticator; `pending` carries the verified first step. */
export function otpPage(p: PageContext, opts: { loginName: string; error?: string }): string {
  return layout(
    p,
    p.t.otpTitle,
    `<p class="who">${esc(opts.loginName)}</p><p>${esc(p.t.otpIntro)}</p>` +
      errorBox(opts.error) +
      form(
        p,
        "/ui/login/otp",
        `${field("code", p.t.otpCode, "text", 'inputmode="numeric" pattern="[0-9 ]*" autocomplete="one-time-code" required autofocus')}<button type="submit">${esc(p.t.next)}</button>`,
      ),
  );
}

/** TOTP enrolment: the QR code (an inline SVG, made by the server: no script, no image request) and the key. */
export function otpSetupPage(
  p: PageContext,
  opts: { qrSvg: string; secret: string; uri: string; extra: Record<string, string>; error?: string; canSkip?: boolean; keyAllowed?: boolean },
): string {
  const skip = opts.canSkip ? form(p, "/ui/login/mfa/skip", `<button type="submit" class="secondary">${esc(p.t.mfaSkip)}</button>`, opts.extra) : "";
  const key = opts.keyAllowed
    ? form(p, "/ui/login/webauthn/setup", `<button type="submit" class="secondary">${esc(p.t.webauthnInsteadOfOtp)}</button>`, {
        ...opts.extra,
        purpose: "u2f",
      })
    : "";
  return layout(
    p,
    p.t.otpSetup,
    `<p>${esc(p.t.otpSetupIntro)}</p><div class="qr" data-otpauth="${esc(opts.uri)}">${opts.qrSvg}</div>` +
      `<p>${esc(p.t.otpSecret)}: <code id="otp-secret">${esc(opts.secret)}</code></p>` +
      errorBox(opts.error) +
      form(
        p,
        "/ui/login/otp/setup/verify",
        `${field("code", p.t.otpCode, "text", 'inputmode="numeric" pattern="[0-9 ]*" autocomplete="one-time-code" required autofocus')}<button type="submit">${esc(p.t.save)}</button>`,
        opts.extra,
      ) +
      key +
      skip,
  );
}

/** Registration of a security key or a passkey for a signed-in account (the server refuses what the settings do not allow). */
export function webauthnSetupButtons(p: PageContext, extra: Record<string, string>): string {
  const button = (purpose: string, label: string) =>
    form(p, "/ui/login/webauthn/setup", `<button type="submit" class="secondary">${esc(label)}</button>`, { ...extra, purpose });
  return button("u2f", p.t.webauthnAddKey) + button("passwordless", p.t.webauthnAddPasskey);
}

export function logoutPage(p: PageContext): string {
  return layout(p, p.t.logout, `<p>${esc(p.t.logoutConfirm)}</p>${form(p, "/ui/login/logout", `<button type="submit">${esc(p.t.logout)}</button>`)}`);
}

export function messagePage(p: Branded, title: string, message: string): string {
  return layout(p, title, `<p>${esc(message)}</p>`);
}

export const stylesheet = `*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,sans-serif;background:var(--svc-background,#f5f6f8);color:var(--svc-font,#1d2330)}
main{max-width:24rem;margin:10vh auto;padding:2rem;background:#fff;color:#1d2330;border-radius:.75rem;box-shadow:0 1px 4px #0002}
h1{font-size:1.4rem;margin:0 0 1rem}label{display:block;margin:.75rem 0 .25rem;font-size:.9rem}
input{width:100%;padding:.55rem .7rem;border:1px solid #b8bfcc;border-radius:.4rem;font:inherit}
button{margin-top:1rem;width:100%;padding:.6rem;border:0;border-radius:.4rem;background:var(--svc-primary,#3448c5);color:#fff;font:inherit;cursor:pointer}
.error{background:#fde8e8;color:var(--svc-warn,#8a1c1c);padding:.6rem .8rem;border-radius:.4rem}.who{font-weight:600}
.qr svg{width:100%;max-width:16rem}code{word-break:break-all}.accounts{list-style:none;padding:0}.account{background:#eef0f6;color:#1d2330;text-align:left}small{color:#5b6478}a{color:var(--svc-primary,#3448c5)}
footer.product{text-align:center;font-size:.8rem;opacity:.7;margin-bottom:2rem}img.logo{display:block;max-width:10rem;max-height:4rem;margin:0 0 1rem}`;
