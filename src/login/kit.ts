import { Code, ConnectError } from "@connectrpc/connect";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { hostnameOf } from "../authz/interceptor.js";
import type { FailureLimiter, SignInLimits, TooManyFailures } from "../command/failure-limits.js";
import { type Lockout, lockoutOf as lockoutFor } from "../command/login.js";
import type { RateLimiter } from "../command/rate-limits.js";
import type { ReplayGuard } from "../command/replay.js";
import type { SecretBox } from "../crypto/secrets.js";
import { addressKey } from "../domain/client-address.js";
import type { Clock } from "../domain/clock.js";
import { inheritanceChain } from "../domain/contexts.js";
import type { FailureRules, RateRule } from "../domain/rate-rules.js";
import { defaultsOf, type SettingsValues } from "../domain/settings-kinds.js";
import type { EventStore } from "../eventstore/eventstore.js";
import type { LdapFederation } from "../federation/ldap.js";
import type { RedirectProtocols } from "../federation/redirect.js";
import { AuthRequestQueries } from "../query/auth-requests.js";
import type { ProjectionCache } from "../query/cache.js";
import type { SettingsQueries } from "../query/settings.js";
import { type SessionLifetimes, SessionQueries } from "../query/sessions.js";
import type { InstanceRow, OrgRow, TenancyQueries } from "../query/tenancy.js";
import { UserQueries } from "../query/users.js";
import type { Database } from "../storage/database.js";
import { AGENT_COOKIE, addStrictTransport, cookiesOf, crossOriginPost, hashAgent, nulParameter, ownOriginOf } from "../web/browser.js";
import * as pages from "../web/pages.js";
import { chooseLanguage, customTexts, preferredLanguages, textsFor } from "../web/texts.js";
import { csrfCookieName, newCookieValue, type Signer } from "./signing.js";
import { errorIdOf } from "../errors/errors.js";

/**
 * The login UI's page kit: what every step (one module each, registered by routes.ts) shares. The scope's form
 * parser and hooks (security headers, a blocked instance's page, NUL refusal), the per-request context of a page
 * (instance, language, texts, branding, CSRF token, `send`), CSRF-checked form posts, cookies, redirects on, and
 * the browser's signed-in accounts.
 */
export interface LoginDeps {
  es: EventStore;
  db: Database;
  cache: ProjectionCache;
  tenancy: TenancyQueries;
  settings: SettingsQueries;
  signer: Signer;
  /** Opens TOTP secrets to check codes. */
  box: SecretBox;
  /** Cookies get the Secure flag when the server is reached over https. */
  secureCookies: boolean;
  /** SVC_SESSION_IDLE, SVC_SESSION_LIFETIME: the account chooser lists only sessions that have not ended. */
  sessionLifetimes: SessionLifetimes;
  /** SVC_RATE_LIMIT_LOGIN_ADDRESS: form posts per client address, counted in the database. */
  rateLimit?: { limiter: RateLimiter; address?: RateRule | undefined };
  /** SVC_RATE_LIMIT_SIGNIN_FAILURES_*: failed passwords, login names and codes per client address and account. */
  failures?: { limiter: FailureLimiter; rules: FailureRules };
  /** Uses up accepted TOTP codes. */
  replay: ReplayGuard;
  /** The time of the lifetime decisions: sessions, recent sign-ins, skipped set-ups (src/domain/clock.ts). */
  clock: Clock;
  /** The protocols of the external identity providers the login UI signs in through (requests under the outbound policy). */
  protocols: RedirectProtocols;
  /** The directories (LDAP providers) it signs in at (connections under the outbound policy). */
  directories: LdapFederation;
}

export const LOGIN_PATH = "/ui/login";
/**
 * How recent an account's sign-in must be for it to add a way of signing in (Keycloak's maximum age of the
 * authentication for such required actions: 5 minutes).
 */
const RECENT_SIGN_IN_MS = 5 * 60_000;
/** A verified password waiting for the required change, a second factor or its set-up is good for this long. */
export const PENDING_TTL_MS = 10 * 60_000;

// Scripts only from this server (the WebAuthn pages' static script); styles only from our own stylesheet; never framed. form-action is left out on purpose:
// after a sign-in the browser follows redirects to the relying party, which form-action would block.
const securityHeaders = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; font-src 'self'; base-uri 'none'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "cross-origin-opener-policy": "same-origin",
};

export type Fields = Record<string, string>;

/**
 * A form's or query's fields that are text: a JSON body (the scope inherits Fastify's JSON parser) or a repeated
 * query parameter may bring numbers, objects or lists, which no step reads (they would throw in `.trim()`).
 */
function textFields(values: unknown): Fields {
  if (!values || typeof values !== "object") return {};
  return Object.fromEntries(Object.entries(values as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === "string"));
}

/** The pages a flow may continue at: the OIDC provider's (authorize callback, end-session done) and the login UI's. */
const RETURN_PAGES = /^\/(oauth\/v2\/|oidc\/v1\/end_session\/done$|ui\/login(\/|$))/;

/**
 * Only a page of this server, never another origin (no open redirect): the value resolved as a browser resolves a
 * Location header (WHATWG: TAB, CR and LF deleted anywhere, `\` read as `/`, dot segments resolved), and handed on
 * as that normalised path and query. Control characters and backslashes are refused before: no page of ours needs
 * them, and each is a way to make a browser read another host than a check on the raw text sees.
 */
function safeReturn(value: string | undefined, ownOrigin: string): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses
  if (!value || /[\u0000-\u001f\u007f\\]/.test(value) || !URL.canParse(value, ownOrigin)) return undefined;
  const url = new URL(value, ownOrigin);
  return url.origin === ownOrigin && RETURN_PAGES.test(url.pathname) ? `${url.pathname}${url.search}` : undefined;
}

/** Where the flow continues, told which session it may use (the receiver checks it belongs to the browser). */
export const continueTo = (returnTo: string, sessionId: string) => `${returnTo}${returnTo.includes("?") ? "&" : "?"}session=${encodeURIComponent(sessionId)}`;

/** Everything a page needs about the request: instance, language, CSRF token, browser sessions. */
export interface Ctx {
  instance: InstanceRow | null;
  /** The form's fields (POST) or the query's (GET). */
  fields: Fields;
  page: pages.PageContext;
  cookies: Record<string, string>;
  /** Sends a page, with the cookies set so far. */
  send(html: string, status?: number): FastifyReply;
  /** Cookies this request sets (the CSRF cookie when new, the browser's agent cookie). */
  setCookies: string[];
  /** The organisation the application asked for: undefined for none, null for one that is not the instance's. */
  org: OrgRow | null | undefined;
  /** Where this request's failed sign-in steps count (its client address, the account a step names). */
  limits: SignInLimits | undefined;
  /** The page for a step refused while its address or account is over its failures (429, Retry-After). */
  tooMany(refused: TooManyFailures): FastifyReply;
  /** This server's origin as the browser reached it (scheme and host, as a trusted proxy forwarded them). */
  origin: string;
}

/**
 * How a sign-in's first factor was proven: a local password, or an external identity provider (federated). The
 * second factor's step carries it sealed, and the sign-in's amr starts with it.
 */
/**
 * How the first factor was proven: a password; a provider (`fed:<its ID>`, which the session records; amr says
 * fed); or a password that links an account at a provider once the sign-in completes (`link:<the link, sealed
 * with the step>`, "link to my existing account"; amr says pwd).
 */
export type FirstFactor = "pwd" | `fed:${string}` | `link:${string}`;
export const firstFactorOf = (sealed: Record<string, unknown> | undefined): FirstFactor =>
  typeof sealed?.f1 === "string" && (sealed.f1.startsWith("fed:") || sealed.f1.startsWith("link:")) ? (sealed.f1 as FirstFactor) : "pwd";
/** Whether the first factor was a local credential (force_mfa_local_only applies). */
export const isLocalFactor = (first: FirstFactor) => first === "pwd" || first.startsWith("link:");

/** A user as a sign-in step knows it. */
export type SignedInUser = { id: string; orgId: string; username: string; displayName: string };

/** A signed-in account of this browser (one of its sessions). */
export type BrowserAccount = Awaited<ReturnType<SessionQueries["ofBrowser"]>>[number] & { sessionId: string };

/**
 * A second factor's step after the password: when `allowed` (the login settings' second_factors) permits it and
 * the user has one, its page is sent and the sign-in waits for it. Whether it was offered: a sent reply is no
 * value to test (awaited, it is undefined), hence the boolean.
 */
export interface SecondFactorStep {
  offer(c: Ctx, reply: FastifyReply, instance: InstanceRow, user: SignedInUser, allowed: readonly string[], first: FirstFactor): Promise<boolean>;
}

/** Whether a command refused with one of `codes` (its errors are ConnectErrors, each with a named code). */
export const refusedWith = (e: unknown, ...codes: Code[]): e is ConnectError => e instanceof ConnectError && codes.includes(e.code);

/** The command's error ID for a username on another organisation's verified domain (src/command/users.ts). */
const USERNAME_ON_FOREIGN_DOMAIN = "USER-d0mn";

/** A new account's username is not to be had: taken, or on another organisation's verified domain. */
export const usernameUnavailable = (e: unknown): boolean => refusedWith(e, Code.AlreadyExists) || errorIdOf(e) === USERNAME_ON_FOREIGN_DOMAIN;

/** A form post's handler: runs only from a page of this origin, with a valid CSRF token, in a known instance. */
export type PostHandler = (c: Ctx, reply: FastifyReply, instance: InstanceRow) => Promise<unknown>;

export interface LoginKit {
  /** The login UI's Fastify scope. */
  ui: FastifyInstance;
  deps: LoginDeps;
  users: UserQueries;
  sessions: SessionQueries;
  /** A Set-Cookie value, Secure when the server is reached over https. */
  cookie(name: string, value: string, opts: { sameSite: "Lax" | "Strict"; path: string; maxAge?: number }): string;
  /** The page context of a request; `fields` instead of the request's own (a flow resumed from what it carried). */
  contextOf(req: FastifyRequest, reply: FastifyReply, fields?: Fields): Promise<Ctx>;
  /** A form post: rate-limited per address, CSRF-checked, in a known instance. */
  post(path: string, handler: PostHandler): void;
  /** The branding in force (activated; inherited from the instance and the system). */
  brandingOf(instanceId: string, orgId?: string): Promise<SettingsValues<"branding">>;
  /** The login settings of the instance, or of the organisation's chain. */
  loginSettings(instanceId: string, orgId?: string): Promise<SettingsValues<"login">>;
  /** The accounts this browser is signed in with, in the instance. */
  accountsOf(instanceId: string, agent: string | undefined): Promise<BrowserAccount[]>;
  /** The signed-in account of this browser that a form names by its session. */
  accountOf(c: Ctx, instanceId: string): Promise<BrowserAccount | undefined>;
  /** Whether the account signed in recently enough to add a way of signing in; else it was sent to sign in again (answered). */
  signedInRecently(c: Ctx, account: { authTime: Date; loginName: string }): Promise<boolean>;
  /** The lockout settings of the user's organisation, under which failed checks count. */
  lockoutOf(instanceId: string): Lockout;
  /** Seals a sign-in waiting for its second factor's set-up (`pending`), and whether it is forced. */
  sealMfaInit(userId: string, instanceId: string, forced: boolean, first: FirstFactor): string;
  /** The user of a sign-in waiting for its second factor's set-up, and whether it was forced. */
  mfaInitPending(c: Ctx, instance: InstanceRow): Promise<{ user: SignedInUser; forced: boolean; first: FirstFactor } | undefined>;
  /** A 303 on to `location`, with the cookies set so far. */
  redirect(c: Ctx, reply: FastifyReply, location: string): FastifyReply;
}

/** The settings chain of a page: the organisation's when the request names one, else the instance's. */
const chainOf = (instanceId: string, orgId?: string) => inheritanceChain(orgId ? { type: "org", instanceId, orgId } : { type: "instance", instanceId });

/** Sets up the login UI's scope `ui` (form parser, hooks) and returns the kit its steps use. */
export function createLoginKit(ui: FastifyInstance, deps: LoginDeps): LoginKit {
  const { db, tenancy, settings, signer } = deps;
  const sessions = new SessionQueries(db, deps.cache, deps.sessionLifetimes, deps.clock);
  const users = new UserQueries(db, deps.cache);
  const authRequests = new AuthRequestQueries(db);
  const cookie = (name: string, value: string, opts: { sameSite: "Lax" | "Strict"; path: string; maxAge?: number }) =>
    `${name}=${value}; Path=${opts.path}; HttpOnly; SameSite=${opts.sameSite}${deps.secureCookies ? "; Secure" : ""}${opts.maxAge !== undefined ? `; Max-Age=${opts.maxAge}` : ""}`;
  // A `__Host-` cookie must have Path=/; the plain one stays with the login UI.
  const csrfCookie = { name: csrfCookieName(deps.secureCookies), path: deps.secureCookies ? "/" : LOGIN_PATH };

  // Forms arrive URL-encoded; only these routes accept that content type.
  ui.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string", bodyLimit: 64 * 1024 }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  ui.addHook("onSend", async (req, reply) => {
    // Pages are never cached; a route that says how it may be (stylesheets, branding files) keeps its say.
    reply.headers({ ...securityHeaders, "cache-control": reply.getHeader("cache-control") ?? securityHeaders["cache-control"] });
    addStrictTransport(req, reply, deps.secureCookies);
    // The security settings may let origins frame the login UI (enable_iframe_embedding, allowed_origins):
    // then CSP frame-ancestors names them and X-Frame-Options (which cannot name several) is left out.
    const instance = await tenancy.instanceByDomain(hostnameOf(req.client.host));
    if (!instance) return;
    const security = await settings.values("security", inheritanceChain({ type: "instance", instanceId: instance.id }));
    if (!security.enable_iframe_embedding) return;
    const ancestors = security.allowed_origins.length ? security.allowed_origins.join(" ") : "'none'";
    reply.header("content-security-policy", securityHeaders["content-security-policy"].replace("frame-ancestors 'none'", `frame-ancestors ${ancestors}`));
    reply.removeHeader("x-frame-options");
  });
  /** A page of one message, in the request's language, before any handler runs. */
  async function refuse(req: FastifyRequest, reply: FastifyReply, instance: InstanceRow | null, status: number, message: "instanceBlocked" | "badRequest") {
    const lang = await languageOf(instance, undefined, req.headers["accept-language"]);
    const t = await textsOf(instance, lang);
    return reply
      .status(status)
      .type("text/html; charset=utf-8")
      .send(pages.messagePage({ lang, t }, t.title, t[message]));
  }
  // A blocked instance's pages say so (429), before anything else.
  ui.addHook("preHandler", async (req, reply) => {
    const instance = await tenancy.instanceByDomain(hostnameOf(req.client.host));
    // Its stylesheets and branding files still load, so that the page saying so looks like the others.
    if (!instance?.blocked || /\/(style|branding)\.css$|\/assets\//.test(req.url.split("?")[0]!)) return;
    return refuse(req, reply, instance, 429, "instanceBlocked");
  });
  // No field of these forms needs U+0000, and PostgreSQL refuses it in text: a 400 page, before any lookup.
  ui.addHook("preHandler", async (req, reply) => {
    if (!nulParameter(req.query) && !nulParameter(req.body)) return;
    return refuse(req, reply, await tenancy.instanceByDomain(hostnameOf(req.client.host)), 400, "badRequest");
  });

  async function contextOf(req: FastifyRequest, reply: FastifyReply, given?: Fields): Promise<Ctx> {
    const instance = await tenancy.instanceByDomain(hostnameOf(req.client.host));
    const fields: Fields = given ?? textFields(req.method === "POST" ? req.body : req.query);
    const origin = ownOriginOf(req, deps.secureCookies);
    const returnTo = safeReturn(fields.return_to, origin);
    // The organisation the application asked for: its texts, branding and languages, and only its users.
    const org = instance && returnTo ? await requestedOrgOf(instance.id, returnTo) : undefined;
    const orgId = org?.id;
    const lang = await languageOf(instance, fields.ui_locales, req.headers["accept-language"], orgId);
    const t = await textsOf(instance, lang, orgId);
    const branding = instance ? await brandingOf(instance.id, orgId) : undefined;
    const brand = {
      hideProduct: !!branding?.hide_product_branding,
      logo: branding?.logo || undefined,
      logoDark: branding?.logo_dark || undefined,
      icon: branding?.icon || undefined,
      ...(orgId ? { brandingOrg: orgId } : {}),
    };
    const cookies = cookiesOf(req);
    let csrfValue = cookies[csrfCookie.name];
    const setCookies: string[] = [];
    if (!csrfValue) {
      csrfValue = newCookieValue();
      setCookies.push(cookie(csrfCookie.name, csrfValue, { sameSite: "Strict", path: csrfCookie.path }));
    }
    const carry: Fields = {};
    if (returnTo) carry.return_to = returnTo;
    if (fields.ui_locales) carry.ui_locales = fields.ui_locales.slice(0, 100);
    const page: pages.PageContext = { lang, t, csrf: signer.csrfToken(csrfValue), carry, ...brand };
    const send = (html: string, status = 200) => {
      if (setCookies.length) reply.header("set-cookie", setCookies);
      return reply.status(status).type("text/html; charset=utf-8").send(html);
    };
    // Where this request's failed sign-in steps count: its client address, and the account a step names.
    const limits: SignInLimits | undefined = deps.failures && {
      limiter: deps.failures.limiter,
      address: deps.failures.rules.signInAddress && { key: `signin:addr:${addressKey(req.client.address)}`, rule: deps.failures.rules.signInAddress },
      account: deps.failures.rules.signInAccount,
    };
    const tooMany = (refused: TooManyFailures) => {
      reply.header("retry-after", String(refused.retryAfterS));
      return send(pages.messagePage(page, t.title, t.tooManyRequests), 429);
    };
    return { instance, fields, page, cookies, send, setCookies, org, limits, tooMany, origin };
  }

  /**
   * The organisation the authorization request behind `returnTo` names in its scopes (urn:svc:iam:org:id:… or
   * …:domain:primary:…); undefined for none, null for one that is not the instance's.
   */
  async function requestedOrgOf(instanceId: string, returnTo: string) {
    const url = new URL(returnTo, "http://login.invalid");
    const id = url.pathname.endsWith("/authorize/callback") ? url.searchParams.get("id") : null;
    const found = id ? await authRequests.byId(instanceId, id) : null;
    if (!found) return undefined;
    return tenancy.requestedOrg(instanceId, (found.request as { scopes?: string[] }).scopes ?? []);
  }

  const brandingOf = (instanceId: string, orgId?: string) => settings.values("branding", chainOf(instanceId, orgId));

  /** The labels in force (the text settings, inherited from the instance and the system). */
  async function textsOf(instance: InstanceRow | null, lang: string, orgId?: string) {
    if (!instance) return textsFor(lang);
    return customTexts(lang, (await settings.setWithPrefix("text", chainOf(instance.id, orgId), `${lang}.login.`)) as Record<string, string>);
  }

  async function languageOf(instance: InstanceRow | null, uiLocales: string | undefined, acceptLanguage: string | undefined, orgId?: string) {
    const language = instance ? await settings.values("language", chainOf(instance.id, orgId)) : defaultsOf("language");
    return chooseLanguage(preferredLanguages(uiLocales, acceptLanguage), [...language.restricted_languages], language.default_language);
  }

  async function accountsOf(instanceId: string, agent: string | undefined) {
    if (!agent) return [];
    return (await sessions.ofBrowser(instanceId, hashAgent(agent))).map((x) => ({ ...x, sessionId: x.id }));
  }

  async function accountOf(c: Ctx, instanceId: string) {
    return (await accountsOf(instanceId, c.cookies[AGENT_COOKIE])).find((a) => a.sessionId === c.fields.sessionId);
  }

  /**
   * Whether the account signed in recently enough to add a way of signing in (a second factor, a key); else its
   * password page is sent, to sign in again first (the review's informational point: a browser left signed in
   * must not let whoever sits at it add their own authenticator to the account).
   */
  async function signedInRecently(c: Ctx, account: { authTime: Date; loginName: string }): Promise<boolean> {
    if (deps.clock.now() - account.authTime.getTime() <= RECENT_SIGN_IN_MS) return true;
    await c.send(pages.passwordPage(c.page, { loginName: account.loginName, error: c.page.t.signInAgain }), 401);
    return false;
  }

  const lockoutOf = (instanceId: string): Lockout => lockoutFor(settings, instanceId, deps.box);

  const sealMfaInit = (userId: string, instanceId: string, forced: boolean, first: FirstFactor) =>
    signer.seal("mfa-init", { u: userId, i: instanceId, f: forced, f1: first }, PENDING_TTL_MS);

  async function mfaInitPending(c: Ctx, instance: InstanceRow) {
    const proof = signer.open("mfa-init", c.fields.pending);
    const user = proof && proof.i === instance.id ? await users.byId(instance.id, String(proof.u)) : null;
    return user?.state === "active" ? { user, forced: proof!.f === true, first: firstFactorOf(proof) } : undefined;
  }

  const post = (path: string, handler: PostHandler) => {
    ui.post(path, async (req, reply) => {
      const c = await contextOf(req, reply);
      // Every form post counts, before anything is checked (a wrong password costs the same as a right one).
      if (deps.rateLimit?.address) {
        const verdict = await deps.rateLimit.limiter.hit(`login:addr:${addressKey(req.client.address)}`, deps.rateLimit.address);
        if (!verdict.allowed) {
          reply.header("retry-after", String(verdict.retryAfterS));
          return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.tooManyRequests), 429);
        }
      }
      const fromOurForm = !crossOriginPost(req, ownOriginOf(req, deps.secureCookies)) && signer.csrfValid(c.cookies[csrfCookie.name], c.fields.csrf);
      if (!fromOurForm) return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.csrf), 403);
      if (!c.instance) return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.notFound), 404);
      return handler(c, reply, c.instance);
    });
  };

  const redirect = (c: Ctx, reply: FastifyReply, location: string) => {
    if (c.setCookies.length) reply.header("set-cookie", c.setCookies);
    return reply.status(303).header("location", location).send();
  };

  return {
    ui,
    deps,
    users,
    sessions,
    cookie,
    contextOf,
    post,
    brandingOf,
    loginSettings: (instanceId, orgId) => settings.values("login", chainOf(instanceId, orgId)),
    accountsOf,
    accountOf,
    signedInRecently,
    lockoutOf,
    sealMfaInit,
    mfaInitPending,
    redirect,
  };
}
