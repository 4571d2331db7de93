import type { FastifyReply, FastifyRequest } from "fastify";
import {
  continueIntent,
  failIntent,
  holdPostedAnswer,
  waitingIntentProvider,
  type IntentResult,
  startIntent,
  succeedIntent,
  type TakenIntent,
  takeIntent,
} from "../command/idp-intents.js";
import type { ContextRef } from "../query/reuse.js";
import { type IdpKind, kindOfType } from "../domain/idps.js";
import type { ExternalUser, RedirectStart, StoredProvider } from "../federation/provider.js";
import { reasonsOf } from "../errors/causes.js";
import { storedProviderOf } from "../federation/stored.js";
import { FORM_POST_KINDS, REDIRECT_KINDS, type RedirectProtocols, refusedByProvider } from "../federation/redirect.js";
import { IdpQueries, type IdpRow } from "../query/idps.js";
import type { InstanceRow } from "../query/tenancy.js";
import * as pages from "../web/pages.js";
import type { AfterFirstFactor } from "./password.js";
import { registerExternalAccounts } from "./idp-account.js";
import { type Ctx, LOGIN_PATH, type LoginKit, PENDING_TTL_MS } from "./kit.js";
import { newCookieValue } from "./signing.js";

/** Where every redirect kind's provider sends the browser back (the `callback_url` of every get). */
export const IDP_CALLBACK_PATH = "/idps/callback";
/**
 * The browser's binding to its round trips: only the browser that left comes back with the answer. `__Host-` over
 * https, as the CSRF cookie: a sibling host of the site cannot plant one (login CSRF by cookie tossing).
 */
const bindingCookieName = (secure: boolean) => (secure ? "__Host-svc_idp" : "svc_idp");

/**
 * Sign-in through external identity providers in the hosted login UI: the login-name page's buttons (those
 * active in the context of the request, when the login settings allow external providers), the round trip to
 * the provider, and what happens to the account as the provider's options say.
 */
export interface ExternalSignIn {
  /** The buttons of the login-name page: the providers a sign-in here may use. */
  providersFor(c: Ctx, instance: InstanceRow): Promise<{ id: string; name: string }[]>;
  /** The provider of `idpId` when a sign-in in the request's context may use it. */
  usableProvider(c: Ctx, instance: InstanceRow, idpId: string | undefined): Promise<IdpRow | undefined>;
  /** The provider's configuration as its protocol reads it (the secret opened). */
  storedOf(row: IdpRow): StoredProvider;
  /** The account of an external user the provider vouched for (linked, linked now, or created), then the sign-in. */
  signInAs(c: Ctx, reply: FastifyReply, instance: InstanceRow, row: IdpRow, external: ExternalUser): Promise<unknown>;
}

/** The kinds a sign-in in the login UI can use: the redirect kinds, and directories (a form of their own). */
const SIGN_IN_KINDS: readonly IdpKind[] = [...REDIRECT_KINDS, "ldap"];

export function registerExternalSignIn(kit: LoginKit, needs: { afterFirstFactor: AfterFirstFactor; protocols: RedirectProtocols }): ExternalSignIn {
  const { es, db, box } = kit.deps;
  const BINDING_COOKIE_NAME = bindingCookieName(kit.deps.secureCookies);
  const idps = new IdpQueries(db);

  const contextOf = (c: Ctx, instance: InstanceRow): ContextRef =>
    c.org ? { type: "org", id: c.org.id, instanceId: instance.id } : { type: "instance", id: instance.id, instanceId: instance.id };

  /**
   * The providers a sign-in may use in the context (an organisation, else the instance): active there, allowed by
   * its login settings, of a kind this server signs in with.
   */
  async function usableIn(ctx: ContextRef, instance: InstanceRow): Promise<IdpRow[]> {
    const login = await kit.loginSettings(instance.id, ctx.type === "org" ? ctx.id : undefined);
    if (!login.allow_external_idp) return [];
    // By kind alone: listing a provider opens no secret.
    return (await idps.activeIn(ctx)).filter((r) => SIGN_IN_KINDS.includes(kindOfType(r.type)!));
  }
  const usable = (c: Ctx, instance: InstanceRow) => usableIn(contextOf(c, instance), instance);

  // A usable row is of a kind this server signs in with: its kind is known.
  const storedOf = (row: IdpRow): StoredProvider => storedProviderOf(row, box)!;
  /** The provider's redirect protocol (its discovered metadata kept per version of its configuration). */
  const protocolOf = (row: IdpRow) => needs.protocols.of(storedOf(row));
  const callbackOf = (c: Ctx) => `${c.origin}${IDP_CALLBACK_PATH}`;

  /** The browser's binding cookie's value, set now when it has none. */
  function bindingOf(c: Ctx): string {
    let binding = c.cookies[BINDING_COOKIE_NAME];
    if (!binding) {
      binding = newCookieValue();
      // Lax: the provider's answer is a top-level navigation from its site, which carries Lax cookies.
      // Path=/: the start pages see it too, so that round trips of several tabs share it.
      c.setCookies.push(kit.cookie(BINDING_COOKIE_NAME, binding, { sameSite: "Lax", path: "/" }));
      c.cookies[BINDING_COOKIE_NAME] = binding;
    }
    return binding;
  }
  const accounts = registerExternalAccounts(kit, {
    afterFirstFactor: needs.afterFirstFactor,
    allowedInOrg: async (instance, row, orgId) => (await usableIn({ type: "org", id: orgId, instanceId: instance.id }, instance)).some((r) => r.id === row.id),
    usableProvider: (c, instance, idpId) => usableProvider(c, instance, idpId),
    bindingOf,
  });
  const usableProvider = async (c: Ctx, instance: InstanceRow, idpId: string | undefined) =>
    idpId ? (await usable(c, instance)).find((r) => r.id === idpId) : undefined;

  /**
   * The callback's way on: a page that moves the browser to `/ui/login/idp/continue`, where the account and the
   * sign-in's next pages (a second factor, a choice of account) get the login UI's cookies, which the provider's
   * cross-site redirect did not bring (continuePage). The external user goes along sealed, bound to this browser.
   */
  function continueAt(c: Ctx, instance: InstanceRow, row: IdpRow, external: ExternalUser, intentId: string) {
    const { raw: _raw, tokens: _tokens, ...plain } = external;
    // Encrypted too: the URL may be logged on the way (a proxy's access log), and the user's address is in it.
    const user = box.seal(JSON.stringify(plain));
    const sealed = kit.deps.signer.seal("idp-continue", { u: user, p: row.id, i: instance.id, b: bindingOf(c), n: intentId }, PENDING_TTL_MS);
    return c.send(pages.continuePage(c.page, `${c.origin}${LOGIN_PATH}/idp/continue?${new URLSearchParams({ ...c.page.carry, s: sealed })}`));
  }

  kit.ui.get(`${LOGIN_PATH}/idp/continue`, async (req, reply) => {
    const c = await kit.contextOf(req, reply);
    const sealed = kit.deps.signer.open("idp-continue", c.fields.s);
    if (!c.instance || !sealed || sealed.i !== c.instance.id || sealed.b !== c.cookies[BINDING_COOKIE_NAME]) return failed(c, 400);
    if (c.org === null) return failed(c, 403);
    // Once: a continue URL replayed from the browser's history (after a logout, say) signs no one in again.
    if (!(await continueIntent(es, { instanceId: c.instance.id, id: String(sealed.n) }))) return failed(c, 400);
    // Still usable here: a provider deactivated meanwhile completes nothing.
    const row = await usableProvider(c, c.instance, String(sealed.p));
    if (!row) return failed(c, 403);
    const external = JSON.parse(box.open(String(sealed.u))) as Omit<ExternalUser, "raw">;
    return accounts.signInAs(c, reply, c.instance, row, { ...external, raw: {} });
  });

  /** A provider's error, timeout or refusal: a page that says so, never its details (they may carry secrets). */
  // Never a 5xx: the provider failed, not this server, and the page says what to do (house rule: no request causes one).
  const failed = (c: Ctx, status = 400) => c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.externalFailed), status);

  kit.post(`${LOGIN_PATH}/idp/start`, async (c, reply, instance) => {
    const row = (await usable(c, instance)).find((r) => r.id === c.fields.idpId);
    if (!row) return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.notFound), 404);
    // A directory asks for the login name and password on a page of ours.
    if (kindOfType(row.type) === "ldap") return c.send(pages.directoryPage(c.page, { idpId: row.id, name: row.name }));
    const binding = bindingOf(c);
    let start: RedirectStart;
    try {
      start = await protocolOf(row)!.start(callbackOf(c));
    } catch (e) {
      kit.ui.log.warn({ idp: row.id, reason: reasonsOf(e) }, "external sign-in: the provider could not be reached");
      return failed(c);
    }
    const returnTo = c.page.carry.return_to ?? "";
    await startIntent(es, box, {
      instanceId: instance.id,
      idpId: row.id,
      state: start.state,
      binding,
      codeVerifier: start.codeVerifier,
      nonce: start.nonce,
      returnTo,
    });
    // SAML's HTTP-POST binding: a page whose form the browser posts to the provider.
    if (start.form) return c.send(pages.toProviderPage(c.page, start.form));
    return kit.redirect(c, reply, start.url);
  });

  // An answer by form POST (Apple's response_mode=form_post) comes cross-site, without the binding cookie: it is
  // kept with its round trip, once, and the browser sent on to the callback by a top-level GET, which brings it.
  kit.ui.post(IDP_CALLBACK_PATH, async (req, reply) => {
    const c = await kit.contextOf(req, reply);
    c.setCookies.length = 0;
    const fields = Object.fromEntries(
      Object.entries((req.body ?? {}) as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === "string"),
    );
    const state = fields.state ?? "";
    // Only for a provider that answers by form POST (Apple): another's waiting round trip keeps its own answer.
    const idpId = c.instance && state ? await waitingIntentProvider(es, { instanceId: c.instance.id, state }) : undefined;
    const row = idpId ? await idps.byId(idpId) : null;
    const formPost = !!row && kindOfType(row.type) !== undefined && FORM_POST_KINDS.includes(kindOfType(row.type)!);
    const held = formPost && (await holdPostedAnswer(es, box, { instanceId: c.instance!.id, idpId: row.id, state, answer: JSON.stringify(fields) }));
    if (!held) return failed(c, 400);
    return reply.redirect(`${IDP_CALLBACK_PATH}?${new URLSearchParams({ state })}`, 303);
  });

  kit.ui.get(IDP_CALLBACK_PATH, async (req, reply) => {
    // The provider's redirect is cross-site: the CSRF cookie (SameSite=Strict) did not come with it, and a new
    // one would replace the one other tabs' forms carry. No page of the callback sets one.
    const contextOf = async (fields?: Record<string, string>) => {
      const ctx = await kit.contextOf(req, reply, fields);
      ctx.setCookies.length = 0;
      return ctx;
    };
    const c = await contextOf();
    if (!c.instance) return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.notFound), 404);
    const instance = c.instance;
    const state = typeof c.fields.state === "string" ? c.fields.state : "";
    const binding = c.cookies[BINDING_COOKIE_NAME];
    const intent = state ? await takeIntent(es, box, { instanceId: instance.id, state, binding }) : undefined;
    if (!intent) return failed(c, 400);
    let answer: URL;
    try {
      answer = new URL(`${callbackOf(c)}?${new URLSearchParams(c.fields)}`);
    } catch {
      // A Host header no URL can be made of (its port): the request's fault.
      return failed(c, 400);
    }
    if (intent.api) return completeApiIntent(c, reply, instance, { ...intent, api: intent.api }, answer, req.headers);
    // The flow goes on where it was: its organisation, texts and return_to, as carried through the provider
    // (never from this request's query, which the provider's redirect wrote).
    const flow = await contextOf({ return_to: intent.returnTo });
    if (flow.org === null) return failed(flow, 403);
    // Still usable here: a provider deactivated meanwhile (or another organisation's) completes nothing.
    const row = (await usable(flow, instance)).find((r) => r.id === intent.idpId);
    if (!row) return failed(flow, 403);
    let user: ExternalUser;
    try {
      user = await protocolOf(row)!.finish(answer, {
        state,
        nonce: intent.nonce,
        codeVerifier: intent.codeVerifier,
        posted: intent.posted,
        headers: req.headers,
      });
    } catch (e) {
      kit.ui.log.warn({ idp: row.id, reason: reasonsOf(e) }, "external sign-in: the provider's answer was refused");
      // The provider said no (the user cancelled there, or it refused): the browser's request is what failed.
      return failed(flow, 400);
    }
    return continueAt(flow, instance, row, user, intent.id);
  });

  /**
   * An intent of the intents API: the provider's answer checked as the login UI's is (the provider still usable for
   * intents), its result kept for the caller, and the browser sent to the caller's success URL with the intent's ID
   * and token, or to its failure URL with an OAuth-style error (never the provider's own text).
   */
  async function completeApiIntent(
    c: Ctx,
    reply: FastifyReply,
    instance: InstanceRow,
    intent: TakenIntent & { api: NonNullable<TakenIntent["api"]> },
    answer: URL,
    headers: FastifyRequest["headers"],
  ) {
    const to = (base: string, params: Record<string, string>) => {
      const url = new URL(base);
      for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
      return kit.redirect(c, reply, url.href);
    };
    const failure = async (error: string, description: string) => {
      await failIntent(es, intent.id);
      return to(intent.api.failureUrl, { id: intent.id, error, error_description: description });
    };
    const row = await idps.usableForIntent(instance.id, intent.idpId);
    const protocol = row && protocolOf(row);
    if (!row || !protocol) return failure("access_denied", "the identity provider is not active");
    let user: ExternalUser;
    try {
      user = await protocol.finish(answer, {
        state: c.fields.state ?? "",
        nonce: intent.nonce,
        codeVerifier: intent.codeVerifier,
        posted: intent.posted,
        headers,
      });
    } catch (e) {
      kit.ui.log.warn({ idp: row.id, reason: reasonsOf(e) }, "external sign-in (intent): the provider's answer was refused");
      return refusedByProvider(e)
        ? failure("access_denied", "the identity provider refused the sign-in")
        : failure("server_error", "the identity provider's answer could not be used");
    }
    const result: IntentResult = {
      idpId: row.id,
      externalUserId: user.id,
      externalUserName: user.username ?? user.email ?? user.id,
      raw: user.raw,
      accessToken: user.tokens?.accessToken,
      idToken: user.tokens?.idToken,
    };
    const { token } = await succeedIntent(es, box, { instanceId: instance.id, id: intent.id, result });
    return to(intent.api.successUrl, { id: intent.id, token });
  }

  return {
    async providersFor(c, instance) {
      return (await usable(c, instance)).map((r) => ({ id: r.id, name: r.name }));
    },
    usableProvider,
    storedOf,
    signInAs: accounts.signInAs,
  };
}
