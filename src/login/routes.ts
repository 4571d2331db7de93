import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { hostnameOf } from "../authz/interceptor.js";
import { isTooManyFailures, type FailureLimiter, type SignInLimits, type TooManyFailures } from "../command/failure-limits.js";
import { checkPassword, type Lockout } from "../command/login.js";
import type { ReplayGuard } from "../command/replay.js";
import { addressKey } from "../domain/client-address.js";
import type { RateLimiter } from "../command/rate-limits.js";
import { signIn, terminateSessions } from "../command/sessions.js";
import { addTotp, checkTotp, hasVerifiedTotp, mfaInitSkippedAt, skipMfaInit, verifyTotp } from "../command/totp.js";
import { createHuman, setPassword } from "../command/users.js";
import type { SecretBox } from "../crypto/secrets.js";
import { hashPassword } from "../crypto/password.js";
import type { EventStore } from "../eventstore/eventstore.js";
import { inheritanceChain } from "../domain/contexts.js";
import type { FailureRules, RateRule } from "../domain/rate-rules.js";
import { defaultsOf } from "../domain/settings-kinds.js";
import { passwordRules } from "../query/password-rules.js";
import type { SettingsQueries } from "../query/settings.js";
import type { InstanceRow, TenancyQueries } from "../query/tenancy.js";
import type { ProjectionCache } from "../query/cache.js";
import { SessionQueries, type SessionLifetimes } from "../query/sessions.js";
import { UserQueries } from "../query/users.js";
import type { Database } from "../storage/database.js";
import { AGENT_COOKIE, addStrictTransport, cookiesOf, crossOriginPost, hashAgent, nulParameter, ownOriginOf } from "../web/browser.js";
import * as pages from "../web/pages.js";
import { registerOtpCodePages } from "./otp-codes.js";
import { registerRecoveryPages } from "./recovery.js";
import { registerWebauthnPages } from "./webauthn.js";
import { csrfCookieName, newCookieValue, type Signer } from "./signing.js";
import { brandingStylesheet } from "../web/branding.js";
import { chooseLanguage, customTexts, preferredLanguages, textsFor } from "../web/texts.js";

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
}

export const LOGIN_PATH = "/ui/login";
/**
 * How recent an account's sign-in must be for it to add a way of signing in (Keycloak's maximum age of the
 * authentication for such required actions: 5 minutes).
 */
const RECENT_SIGN_IN_MS = 5 * 60_000;
/** A verified password waiting for the required change is good for this long. */
const PENDING_TTL_MS = 10 * 60_000;

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

type Fields = Record<string, string>;

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
const continueTo = (returnTo: string, sessionId: string) => `${returnTo}${returnTo.includes("?") ? "&" : "?"}session=${encodeURIComponent(sessionId)}`;

export function registerLoginUi(app: FastifyInstance, deps: LoginDeps): void {
  const { es, db, tenancy, settings, signer } = deps;
  const sessions = new SessionQueries(db, deps.cache, deps.sessionLifetimes);
  const users = new UserQueries(db, deps.cache);
  const cookie = (name: string, value: string, opts: { sameSite: "Lax" | "Strict"; path: string; maxAge?: number }) =>
    `${name}=${value}; Path=${opts.path}; HttpOnly; SameSite=${opts.sameSite}${deps.secureCookies ? "; Secure" : ""}${opts.maxAge !== undefined ? `; Max-Age=${opts.maxAge}` : ""}`;
  // A `__Host-` cookie must have Path=/; the plain one stays with the login UI.
  const csrfCookie = { name: csrfCookieName(deps.secureCookies), path: deps.secureCookies ? "/" : LOGIN_PATH };

  app.register(async (ui) => {
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

    /** Everything a page needs about the request: instance, language, CSRF token, browser sessions. */
    async function contextOf(req: FastifyRequest, reply: FastifyReply) {
      const instance = await tenancy.instanceByDomain(hostnameOf(req.client.host));
      const fields: Fields = req.method === "POST" ? ((req.body as Fields | undefined) ?? {}) : (req.query as Fields);
      const returnTo = safeReturn(fields.return_to, ownOriginOf(req, deps.secureCookies));
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
      /** The page for a step refused while its address or account is over its failures (429, Retry-After). */
      const tooMany = (refused: TooManyFailures) => {
        reply.header("retry-after", String(refused.retryAfterS));
        return send(pages.messagePage(page, t.title, t.tooManyRequests), 429);
      };
      return { instance, fields, page, cookies, send, setCookies, org, limits, tooMany };
    }

    /**
     * The organisation the authorization request behind `returnTo` names in its scopes (urn:svc:iam:org:id:… or
     * …:domain:primary:…); undefined for none, null for one that is not the instance's.
     */
    async function requestedOrgOf(instanceId: string, returnTo: string) {
      const url = new URL(returnTo, "http://login.invalid");
      const id = url.pathname.endsWith("/authorize/callback") ? url.searchParams.get("id") : null;
      const found = id ? await db.prisma.authRequest.findUnique({ where: { id }, select: { instanceId: true, request: true } }) : null;
      if (found?.instanceId !== instanceId) return undefined;
      return tenancy.requestedOrg(instanceId, (found.request as { scopes?: string[] }).scopes ?? []);
    }

    /** The settings chain of a page: the organisation's when the request names one, else the instance's. */
    const chainOf = (instanceId: string, orgId?: string) => inheritanceChain(orgId ? { type: "org", instanceId, orgId } : { type: "instance", instanceId });

    /** The branding in force (activated; inherited from the instance and the system). */
    const brandingOf = (instanceId: string, orgId?: string) => settings.values("branding", chainOf(instanceId, orgId));

    /** The labels in force (the text settings, inherited from the instance and the system). */
    async function textsOf(instance: InstanceRow | null, lang: string, orgId?: string) {
      if (!instance) return textsFor(lang);
      return customTexts(lang, await settings.values("text", chainOf(instance.id, orgId)));
    }

    async function languageOf(instance: InstanceRow | null, uiLocales: string | undefined, acceptLanguage: string | undefined, orgId?: string) {
      const language = instance ? await settings.values("language", chainOf(instance.id, orgId)) : defaultsOf("language");
      return chooseLanguage(preferredLanguages(uiLocales, acceptLanguage), [...language.restricted_languages], language.default_language);
    }

    /** The accounts this browser is signed in with, in the instance. */
    async function accountsOf(instanceId: string, agent: string | undefined) {
      if (!agent) return [];
      return (await sessions.ofBrowser(instanceId, hashAgent(agent))).map((x) => ({ ...x, sessionId: x.id }));
    }

    type Ctx = Awaited<ReturnType<typeof contextOf>>;

    /** Signs the browser in as `user` and continues where the flow wants to go. */
    async function finish(
      c: Ctx,
      reply: FastifyReply,
      instance: InstanceRow,
      user: { id: string; orgId: string; username: string; displayName: string },
      amr: string[] = ["pwd"],
    ) {
      let agent = c.cookies[AGENT_COOKIE];
      if (!agent) {
        agent = newCookieValue();
        c.setCookies.push(cookie(AGENT_COOKIE, agent, { sameSite: "Lax", path: "/" }));
      }
      // The application asked for users of one organisation: no one else signs in for it (the callback checks too).
      if (c.org !== undefined && c.org?.id !== user.orgId) return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.notInOrganization), 403);
      const sessionId = await signIn(es, sessions, { instanceId: instance.id, agentHash: hashAgent(agent), userId: user.id, orgId: user.orgId, amr });
      if (c.page.carry.return_to) {
        if (c.setCookies.length) reply.header("set-cookie", c.setCookies);
        return reply.status(303).header("location", continueTo(c.page.carry.return_to, sessionId)).send();
      }
      return c.send(pages.signedInPage(c.page, { loginName: user.username, displayName: user.displayName, sessionId }));
    }

    /**
     * After the password: a user with a verified TOTP authenticator proves a code next (every sign-in, so
     * prompt=login and max_age ask for both factors again), carrying the first step sealed and short-lived.
     */
    async function afterPassword(
      c: Ctx,
      reply: FastifyReply,
      instance: InstanceRow,
      user: { id: string; orgId: string; username: string; displayName: string },
    ) {
      const login = await settings.values("login", inheritanceChain({ type: "org", instanceId: instance.id, orgId: user.orgId }));
      const otpAllowed = login.second_factors.includes("otp");
      if (otpAllowed && (await hasVerifiedTotp(db, instance.id, user.id))) {
        const pending = signer.seal("otp", { u: user.id, i: instance.id }, PENDING_TTL_MS);
        return c.send(pages.otpPage({ ...c.page, carry: { ...c.page.carry, pending } }, { loginName: user.username }));
      }
      // A second factor the user has: its step's page, and the sign-in waits for it.
      if (await webauthnStep.offer(c, reply, instance, user, login.second_factors)) return;
      if (await otpCodeStep.offer(c, instance, user, login.second_factors)) return;
      // No second factor yet. Forced (every sign-in here is with a local password, so force_mfa_local_only
      // forces it too): set one up before the sign-in completes. Else asked, with a skip, when the last skip is
      // older than mfa_init_skip_lifetime (0: never asked).
      const forced = login.force_mfa || login.force_mfa_local_only;
      if (otpAllowed && (forced || (await mfaInitDue(instance.id, user.id, login.mfa_init_skip_lifetime)))) {
        const pending = signer.seal("mfa-init", { u: user.id, i: instance.id, f: forced }, PENDING_TTL_MS);
        return enrolPage(c, instance, { userId: user.id, loginName: user.username }, { pending }, { canSkip: !forced });
      }
      if (forced && login.second_factors.includes("u2f")) {
        const pending = signer.seal("mfa-init", { u: user.id, i: instance.id, f: forced }, PENDING_TTL_MS);
        return webauthnStep.setupAtSignIn(c, reply, instance, user, pending);
      }
      if (forced) return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.mfaUnavailable), 403);
      return finish(c, reply, instance, user);
    }

    async function mfaInitDue(instanceId: string, userId: string, lifetimeSeconds: number) {
      if (lifetimeSeconds <= 0) return false;
      const skipped = await mfaInitSkippedAt(db, instanceId, userId);
      return !skipped || Date.now() - skipped.getTime() >= lifetimeSeconds * 1000;
    }

    /** A new TOTP secret to scan (the unverified one before it is replaced), for `extra` to carry to the verification. */
    async function enrolPage(
      c: Ctx,
      instance: InstanceRow,
      who: { userId: string; loginName: string },
      extra: Record<string, string>,
      opts: { error?: string; canSkip?: boolean } = {},
      status = 200,
    ) {
      const enrolment = await addTotp(es, deps.box, {
        instanceId: instance.id,
        userId: who.userId,
        creator: who.userId,
        issuer: instance.name,
        accountName: who.loginName,
      });
      // imported at the first enrolment, not at every start (docs/drafts/build.md, "Idle memory")
      const { default: QRCode } = await import("qrcode");
      const qrSvg = await QRCode.toString(enrolment.uri, { type: "svg", errorCorrectionLevel: "M", margin: 2 });
      const user = await users.byId(instance.id, who.userId);
      const login = await settings.values("login", inheritanceChain({ type: "org", instanceId: instance.id, orgId: user?.orgId ?? "" }));
      return c.send(pages.otpSetupPage(c.page, { ...enrolment, qrSvg, extra, ...opts, keyAllowed: login.second_factors.includes("u2f") }), status);
    }

    /** The user of a sign-in waiting for its second factor's set-up, and whether it was forced. */
    async function mfaInitPending(c: Ctx, instance: InstanceRow) {
      const proof = signer.open("mfa-init", c.fields.pending);
      const user = proof && proof.i === instance.id ? await users.byId(instance.id, String(proof.u)) : null;
      return user?.state === "active" ? { user, forced: proof!.f === true } : undefined;
    }

    /** The signed-in account of this browser that a form names by its session. */
    async function accountOf(c: Ctx, instanceId: string) {
      return (await accountsOf(instanceId, c.cookies[AGENT_COOKIE])).find((a) => a.sessionId === c.fields.sessionId);
    }

    /**
     * Whether the account signed in recently enough to add a way of signing in (a second factor, a key); else its
     * password page is sent, to sign in again first (the review's informational point: a browser left signed in
     * must not let whoever sits at it add their own authenticator to the account).
     */
    async function signedInRecently(c: Ctx, account: { authTime: Date; loginName: string }): Promise<boolean> {
      if (Date.now() - account.authTime.getTime() <= RECENT_SIGN_IN_MS) return true;
      await c.send(pages.passwordPage(c.page, { loginName: account.loginName, error: c.page.t.signInAgain }), 401);
      return false;
    }

    /** The lockout settings of the user's organisation, under which failed checks count. */
    const lockoutOf = (instanceId: string): Lockout => ({
      instanceId,
      maxAttempts: async (u) => (await passwordRules(settings, instanceId, u.orgId)).maxAttempts,
      lockoutDurationS: async (u) => (await passwordRules(settings, instanceId, u.orgId)).lockoutDurationS,
      box: deps.box,
    });

    /** Runs a POST handler only from a page of this origin, with a valid CSRF token, in a known instance. */
    const post = (path: string, handler: (c: Ctx, reply: FastifyReply, instance: InstanceRow) => Promise<unknown>) =>
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

    const canRegister = async (instanceId: string) => (await settings.values("login", inheritanceChain({ type: "instance", instanceId }))).allow_register;

    ui.get(`${LOGIN_PATH}/style.css`, async (_req, reply) =>
      reply.type("text/css; charset=utf-8").header("cache-control", "public, max-age=3600").send(pages.stylesheet),
    );
    // Branding files of the Host's instance, by content: never change, so cached for a year.
    ui.get(`${LOGIN_PATH}/assets/:sha256`, async (req, reply) => {
      const instance = await tenancy.instanceByDomain(hostnameOf(req.client.host));
      const { sha256 } = req.params as { sha256: string };
      const asset =
        instance && /^[0-9a-f]{64}$/.test(sha256)
          ? await db.prisma.brandingAsset.findUnique({ where: { instanceId_sha256: { instanceId: instance.id, sha256 } } })
          : null;
      if (!asset) return reply.status(404).type("text/plain; charset=utf-8").send("not found");
      return reply.type(asset.contentType).header("cache-control", "public, max-age=31536000, immutable").send(Buffer.from(asset.data));
    });
    // The instance's branding: revalidated on every page (no-cache), so that an activation shows at once.
    ui.get(`${LOGIN_PATH}/branding.css`, async (req, reply) => {
      const instance = await tenancy.instanceByDomain(hostnameOf(req.client.host));
      // ?org=: the page was for an organisation's users (only an organisation of this instance counts).
      const orgParam = (req.query as Fields).org;
      const org = instance && orgParam ? await tenancy.orgById(instance.id, orgParam.slice(0, 200)) : null;
      const branding = instance ? await brandingOf(instance.id, org?.id) : defaultsOf("branding");
      return reply.type("text/css; charset=utf-8").header("cache-control", "no-cache").send(brandingStylesheet(branding));
    });

    ui.get(LOGIN_PATH, async (req, reply) => {
      const c = await contextOf(req, reply);
      if (!c.instance) return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.notFound), 404);
      const accounts = c.fields.prompt === "login" ? [] : await accountsOf(c.instance.id, c.cookies[AGENT_COOKIE]);
      if (accounts.length > 1 || (accounts.length === 1 && c.fields.prompt === "select_account")) return c.send(pages.accountsPage(c.page, accounts));
      if (accounts.length === 1 && !c.page.carry.return_to) return c.send(pages.signedInPage(c.page, accounts[0]!));
      const login = await settings.values("login", inheritanceChain({ type: "instance", instanceId: c.instance.id }));
      const loginName = (c.fields.login_hint ?? "").slice(0, 200);
      return c.send(pages.loginNamePage(c.page, { canRegister: login.allow_register, loginName, passkey: login.passwordless_allowed }));
    });

    // The login name alone never says whether the user exists: the password page follows either way.
    post(`${LOGIN_PATH}/loginname`, async (c) => {
      const loginName = (c.fields.loginName ?? "").trim().slice(0, 200);
      if (!loginName) return c.send(pages.loginNamePage(c.page, { canRegister: false, error: c.page.t.wrongCredentials }));
      return c.send(pages.passwordPage(c.page, { loginName }));
    });

    post(`${LOGIN_PATH}/password`, async (c, reply, instance) => {
      const loginName = (c.fields.loginName ?? "").trim().slice(0, 200);
      const user = await checkPassword(es, db, {
        ...lockoutOf(instance.id),
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
      return afterPassword(c, reply, instance, user);
    });

    post(`${LOGIN_PATH}/password/change`, async (c, reply, instance) => {
      const proof = signer.open("password-change", c.fields.pending);
      const user = proof && proof.i === instance.id ? await users.byId(instance.id, String(proof.u)) : null;
      if (user?.state !== "active") return c.send(pages.loginNamePage(c.page, { canRegister: false, error: c.page.t.wrongCredentials }), 401);
      const again = (error: string) =>
        c.send(pages.changePasswordPage({ ...c.page, carry: { ...c.page.carry, pending: String(c.fields.pending) } }, { error }), 400);
      const password = c.fields.newPassword ?? "";
      if (password !== (c.fields.confirmPassword ?? "")) return again(c.page.t.passwordsDiffer);
      const problem = (await passwordRules(settings, instance.id, user.orgId)).problem(password);
      if (problem) return again(problem);
      await setPassword(es, { instanceId: instance.id, id: user.id, creator: user.id, passwordHash: await hashPassword(password), changeRequired: false });
      return afterPassword(c, reply, instance, user);
    });

    post(`${LOGIN_PATH}/otp`, async (c, reply, instance) => {
      const proof = signer.open("otp", c.fields.pending);
      const user = proof && proof.i === instance.id ? await users.byId(instance.id, String(proof.u)) : null;
      if (user?.state !== "active") return c.send(pages.loginNamePage(c.page, { canRegister: false, error: c.page.t.wrongCredentials }), 401);
      const checked = await checkTotp(es, db, deps.box, deps.replay, {
        ...lockoutOf(instance.id),
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
      return finish(c, reply, instance, user, ["pwd", "otp", "mfa"]);
    });

    // Enrolment, for an account signed in in this browser: a new secret shown once, confirmed by a code.
    post(`${LOGIN_PATH}/otp/setup`, async (c, _reply, instance) => {
      const account = await accountOf(c, instance.id);
      if (!account) return c.send(pages.loginNamePage(c.page, { canRegister: false }), 400);
      if (!(await signedInRecently(c, account))) return;
      try {
        return await enrolPage(c, instance, account, { sessionId: account.sessionId });
      } catch (e) {
        if ((e as { code?: number }).code === 6) return c.send(pages.messagePage(c.page, c.page.t.otpSetup, c.page.t.otpAdded), 409);
        throw e;
      }
    });

    // The code that confirms an enrolment: of a signed-in account (sessionId), or of a sign-in that sets up its
    // second factor before it completes (pending), which then completes with both factors.
    post(`${LOGIN_PATH}/otp/setup/verify`, async (c, reply, instance) => {
      const pending = c.fields.pending ? await mfaInitPending(c, instance) : undefined;
      const account = pending ? undefined : await accountOf(c, instance.id);
      const who = pending ? { userId: pending.user.id, loginName: pending.user.username } : account;
      if (!who) return c.send(pages.loginNamePage(c.page, { canRegister: false, error: c.page.t.wrongCredentials }), 400);
      // A wrong code shows a new secret: a set-up's start as much as the set-up page's, and as recent a sign-in.
      if (account && !(await signedInRecently(c, account))) return;
      try {
        await verifyTotp(es, deps.box, { instanceId: instance.id, userId: who.userId, creator: who.userId, code: (c.fields.code ?? "").slice(0, 20) });
      } catch (e) {
        const code = (e as { code?: number }).code;
        // Confirmed already: nothing to confirm. No set-up under way is answered as a wrong code (a new secret).
        if (code === 9) return c.send(pages.messagePage(c.page, c.page.t.otpSetup, c.page.t.otpAdded), 409);
        if (code !== 3 && code !== 5) throw e;
        // A wrong code: a new secret to scan, as the shown one is not kept in the page.
        const extra: Record<string, string> = pending ? { pending: String(c.fields.pending) } : { sessionId: account!.sessionId };
        return enrolPage(c, instance, who, extra, { error: c.page.t.otpWrong, canSkip: pending ? !pending.forced : false }, 400);
      }
      if (pending) return finish(c, reply, instance, pending.user, ["pwd", "otp", "mfa"]);
      if (c.page.carry.return_to) return reply.status(303).header("location", continueTo(c.page.carry.return_to, account!.sessionId)).send();
      return c.send(pages.messagePage(c.page, c.page.t.otpSetup, c.page.t.otpAdded));
    });

    // Putting off the set-up, when it is not forced: the sign-in completes with the password alone.
    post(`${LOGIN_PATH}/mfa/skip`, async (c, reply, instance) => {
      const pending = await mfaInitPending(c, instance);
      if (!pending || pending.forced) return c.send(pages.loginNamePage(c.page, { canRegister: false, error: c.page.t.wrongCredentials }), 401);
      await skipMfaInit(es, { instanceId: instance.id, userId: pending.user.id, orgId: pending.user.orgId });
      return finish(c, reply, instance, pending.user);
    });

    post(`${LOGIN_PATH}/select`, async (c, reply, instance) => {
      const account = (await accountsOf(instance.id, c.cookies[AGENT_COOKIE])).find((a) => a.sessionId === c.fields.sessionId);
      if (!account) return c.send(pages.loginNamePage(c.page, { canRegister: false }), 400);
      if (c.page.carry.return_to) return reply.status(303).header("location", continueTo(c.page.carry.return_to, account.sessionId)).send();
      return c.send(pages.signedInPage(c.page, account));
    });

    ui.get(`${LOGIN_PATH}/register`, async (req, reply) => {
      const c = await contextOf(req, reply);
      if (!c.instance || !(await canRegister(c.instance.id))) return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.notFound), 404);
      return c.send(pages.registerPage(c.page, {}));
    });

    post(`${LOGIN_PATH}/register`, async (c, reply, instance) => {
      if (!(await canRegister(instance.id)) || !instance.defaultOrgId) return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.notFound), 404);
      const f = c.fields;
      const values = { givenName: f.givenName ?? "", familyName: f.familyName ?? "", email: f.email ?? "", loginName: f.loginName ?? "" };
      const again = (error: string) => c.send(pages.registerPage(c.page, { error, values }), 400);
      if (Object.values(values).some((v) => !v.trim() || v.length > 200) || /\s/.test(values.loginName) || !/^[^@\s]+@[^@\s]+$/.test(values.email)) {
        return again(c.page.t.wrongCredentials);
      }
      if ((f.newPassword ?? "") !== (f.confirmPassword ?? "")) return again(c.page.t.passwordsDiffer);
      const problem = (await passwordRules(settings, instance.id, instance.defaultOrgId)).problem(f.newPassword ?? "");
      if (problem) return again(problem);
      const orgId = instance.defaultOrgId;
      try {
        const d = await createHuman(es, {
          instanceId: instance.id,
          orgId,
          creator: "",
          human: { username: values.loginName, givenName: values.givenName, familyName: values.familyName, email: values.email, emailVerified: false },
          passwordHash: await hashPassword(f.newPassword!),
          box: deps.box,
        });
        const user = (await users.byId(instance.id, d.id))!;
        return finish(c, reply, instance, user);
      } catch (e) {
        const refused = e as { code?: number; rawMessage?: string };
        // taken, or on another organisation's verified domain (USER-d0mn): the name is not to be had either way
        if (refused.code === 6 || refused.rawMessage?.endsWith("(USER-d0mn)")) return again(c.page.t.usernameTaken);
        if (refused.code === 3) return again(c.page.t.wrongCredentials);
        throw e;
      }
    });

    registerRecoveryPages(ui, deps, { contextOf, post, accountOf, lockoutOf });
    const otpCodeStep = registerOtpCodePages(deps, { post, finish });
    const webauthnStep = registerWebauthnPages(ui, deps, { contextOf, post, finish, accountOf, mfaInitPending, signedInRecently });

    ui.get(`${LOGIN_PATH}/logout`, async (req, reply) => {
      const c = await contextOf(req, reply);
      return c.send(pages.logoutPage(c.page));
    });

    post(`${LOGIN_PATH}/logout`, async (c, reply, instance) => {
      const agent = c.cookies[AGENT_COOKIE];
      if (agent) await terminateSessions(es, { instanceId: instance.id, agentHash: hashAgent(agent), creator: "" });
      c.setCookies.push(cookie(AGENT_COOKIE, "", { sameSite: "Lax", path: "/", maxAge: 0 }));
      if (c.page.carry.return_to) {
        reply.header("set-cookie", c.setCookies);
        return reply.status(303).header("location", c.page.carry.return_to).send();
      }
      return c.send(pages.messagePage(c.page, c.page.t.logout, c.page.t.loggedOut));
    });
  });
}
