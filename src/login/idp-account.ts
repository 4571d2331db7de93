import { Code } from "@connectrpc/connect";
import type { FastifyReply } from "fastify";
import { recordIdpLogin } from "../command/idp-intents.js";
import { type IdpLink, linkFoundAccount } from "../command/idp-links.js";
import { checkPassword } from "../command/login.js";
import { isTooManyFailures } from "../command/failure-limits.js";
import { createHuman, patchUser } from "../command/users.js";
import type { ExternalUser } from "../federation/provider.js";
import type { IdpRow } from "../query/idps.js";
import type { InstanceRow } from "../query/tenancy.js";
import { userByLoginName, type UserRow } from "../query/users.js";
import * as pages from "../web/pages.js";
import type { AfterFirstFactor } from "./password.js";
import { type Ctx, type FirstFactor, LOGIN_PATH, type LoginKit, PENDING_TTL_MS, refusedWith, type SignedInUser, usernameUnavailable } from "./kit.js";

/** The options of a provider (idp.proto's Options, as stored). */
interface IdpOptions {
  isLinkingAllowed?: boolean;
  isCreationAllowed?: boolean;
  isAutoCreation?: boolean;
  isAutoUpdate?: boolean;
  autoLinking?: string;
}

export interface ExternalAccounts {
  /** The account of an external user the provider vouched for (linked, linked now, created, or offered), then the sign-in. */
  signInAs(c: Ctx, reply: FastifyReply, instance: InstanceRow, row: IdpRow, external: ExternalUser): Promise<unknown>;
}

/** The external user while the browser chooses to link or create an account (sealed, bound to the browser). */
interface Pending {
  idpId: string;
  external: Omit<ExternalUser, "raw" | "tokens">;
  /** The account `auto_linking` found, while the user is asked whether to link it. */
  foundUserId?: string;
}

/** Whether a provider's options allow what a pending choice is about. */
type Allows = (options: IdpOptions) => boolean;
const linkingAllowed: Allows = (o) => !!o.isLinkingAllowed;
const creationAllowed: Allows = (o) => !!o.isCreationAllowed;
const autoLinking: Allows = (o) => !!o.autoLinking && o.autoLinking !== "AUTO_LINKING_OPTION_UNSPECIFIED";

/**
 * What happens to the account of a user an external provider vouched for, exactly as the provider's options say:
 * a linked account signs in (`is_auto_update` takes over what the provider sent); for an unknown one, a matching
 * account here is offered for linking (`auto_linking`: the user links it, or goes on as if none matched); else it
 * is auto-created (`is_auto_creation`), or offered the choice the options allow: "link to my
 * existing account" (after signing in with it here, `is_linking_allowed`) and "create an account" (a form
 * pre-filled from the provider, `is_creation_allowed`). The provider must be usable in the account's own
 * organisation (`allowedInOrg`), checked before anything is linked, updated or created.
 */
export function registerExternalAccounts(
  kit: LoginKit,
  needs: {
    afterFirstFactor: AfterFirstFactor;
    allowedInOrg(instance: InstanceRow, row: IdpRow, orgId: string): Promise<boolean>;
    /** The provider of `idpId` when a sign-in in the request's context may use it. */
    usableProvider(c: Ctx, instance: InstanceRow, idpId: string | undefined): Promise<IdpRow | undefined>;
    /** The browser's binding (its cookie's value) that a pending choice is tied to. */
    bindingOf(c: Ctx): string | undefined;
  },
): ExternalAccounts {
  const { es, db, box, settings, signer } = kit.deps;
  const allowedInOrg = needs.allowedInOrg;
  const failed = (c: Ctx, status: number) => c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.externalFailed), status);

  /**
   * The account of the external user, as the provider's options say, then the sign-in. The provider must be usable
   * in the account's own organisation too (a flow without an organisation asks the instance's), checked before
   * anything is linked, updated or created.
   */
  async function signInAs(c: Ctx, reply: FastifyReply, instance: InstanceRow, row: IdpRow, external: ExternalUser) {
    const options = (row.options ?? {}) as IdpOptions;
    const account: IdpLink = { idpId: row.id, externalUserId: external.id, displayName: external.username ?? external.email ?? external.id };
    const allowedIn = (orgId: string) => allowedInOrg(instance, row, orgId);
    const notAllowed = () => failed(c, 403);
    let user = await kit.users.byExternalAccount(instance.id, row.id, external.id);
    if (user) {
      if (!(await allowedIn(user.orgId))) return notAllowed();
      if (options.isAutoUpdate && user.kind === "human") user = (await updated(instance, user, external)) ?? user;
      return signedInAs(c, reply, instance, user, account, `fed:${account.idpId}`);
    }
    const found = await autoLinked(c, instance, row.id, options, external);
    if (found) {
      if (!(await allowedIn(found.orgId))) return notAllowed();
      const sealed = sealPending(c, instance, { idpId: row.id, external: withoutSecrets(external), foundUserId: found.id });
      if (!sealed) return failed(c, 400);
      return c.send(pages.linkPromptPage(c.page, { pending: sealed, provider: row.name, loginName: found.loginName }));
    }
    return withoutMatch(c, reply, instance, row, withoutSecrets(external), account);
  }

  /** An external user no account here is linked to or matches: created, offered the choices the options allow, or refused. */
  async function withoutMatch(c: Ctx, reply: FastifyReply, instance: InstanceRow, row: IdpRow, external: Pending["external"], account: IdpLink) {
    const options = (row.options ?? {}) as IdpOptions;
    const allowedIn = (orgId: string) => allowedInOrg(instance, row, orgId);
    let user: UserRow | null = null;
    const newOrg = c.org?.id ?? instance.defaultOrgId;
    if (options.isAutoCreation && newOrg) {
      if (!(await allowedIn(newOrg))) return failed(c, 403);
      try {
        user = await created(newOrg, instance, external, account);
      } catch (e) {
        // The provider's username is taken here, or what it sent is no valid account: no account is made; the
        // choices the options allow are still offered (linking to the account that has the name, say).
        if (!refusedWith(e, Code.AlreadyExists, Code.InvalidArgument)) throw e;
        kit.ui.log.info({ idp: row.id, reason: e.message }, "external sign-in: no account could be created");
        if (options.isLinkingAllowed || options.isCreationAllowed) return offer(c, instance, row, external, options);
        return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.externalNoAccount), 409);
      }
    }
    if (!user && (options.isLinkingAllowed || options.isCreationAllowed)) return offer(c, instance, row, external, options);
    if (!user) return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.externalNoAccount), 403);
    return signedInAs(c, reply, instance, user, account, `fed:${account.idpId}`);
  }

  /** The sign-in of the account the external one is linked to, recorded as one through the provider. */
  async function signedInAs(c: Ctx, reply: FastifyReply, instance: InstanceRow, user: UserRow, account: IdpLink, first: FirstFactor) {
    // "initial" is a human without a local password: the provider vouched for it instead.
    if (user.state !== "active" && user.state !== "initial") return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.wrongCredentials), 403);
    await recordIdpLogin(es, { instanceId: instance.id, userId: user.id, orgId: user.orgId, account });
    const signedIn: SignedInUser = { id: user.id, orgId: user.orgId, username: user.loginName, displayName: user.displayName };
    return needs.afterFirstFactor(c, reply, instance, signedIn, first);
  }

  /**
   * The existing user `auto_linking` offers to link the external account to: by username, or by an e-mail address
   * verified here and asserted as verified by the provider; exactly one match (several: no one).
   */
  async function autoLinked(c: Ctx, instance: InstanceRow, idpId: string, options: IdpOptions, external: Pending["external"]) {
    let found: UserRow | null = null;
    if (options.autoLinking === "AUTO_LINKING_OPTION_USERNAME" && external.username) {
      const named = await userByLoginName(db, instance.id, external.username, kit.deps.settings);
      found = named?.kind === "human" && (!c.org || named.orgId === c.org.id) ? named : null;
    } else if (options.autoLinking === "AUTO_LINKING_OPTION_EMAIL" && external.email && external.emailVerified) {
      const matching = await kit.users.withVerifiedEmail(instance.id, external.email, c.org?.id);
      found = matching.length === 1 ? matching[0]! : null;
    }
    // A user linked to another account of this provider keeps that link: it is no match.
    return found && !(await kit.users.linkedToProvider(found.id, idpId)) ? found : null;
  }

  /**
   * `is_auto_update`: the linked human's fields the provider sent, as it sent them (names, language, e-mail with
   * its verified flag as the provider asserts it); a field it did not send stays. Only what changed is written.
   */
  async function updated(instance: InstanceRow, user: NonNullable<Awaited<ReturnType<typeof kit.users.byId>>>, external: ExternalUser) {
    const human = {
      ...(external.givenName ? { givenName: external.givenName } : {}),
      ...(external.familyName ? { familyName: external.familyName } : {}),
      ...(external.displayName ? { displayName: external.displayName } : {}),
      ...(external.preferredLanguage ? { preferredLanguage: external.preferredLanguage } : {}),
      // The same address already verified here stays so: a provider that vouches for none (SAML, say) must not
      // undo that at every sign-in (and send a code each time).
      ...(external.email && !(user.emailVerified && user.email?.toLowerCase() === external.email.toLowerCase())
        ? { email: { address: external.email, verified: external.emailVerified } }
        : {}),
    };
    if (!Object.keys(human).length) return user;
    try {
      await patchUser(es, { instanceId: instance.id, id: user.id, creator: user.id, patch: { human }, box });
    } catch (e) {
      // What the provider sent is no valid value here (an address, a language): the sign-in goes on without it.
      if (!refusedWith(e, Code.InvalidArgument)) throw e;
      kit.ui.log.info({ user: user.id, reason: e.message }, "external sign-in: the provider's fields were not taken over");
      return user;
    }
    return kit.users.byId(instance.id, user.id);
  }

  /** A new human of `orgId` (the flow's organisation, else the instance's default), linked, from what the provider sent. */
  async function created(orgId: string, instance: InstanceRow, external: Pending["external"], account: IdpLink) {
    // A system provider's account linked in another instance: one link per account, made there (no account here).
    if (await kit.users.externalAccountLinked(account.idpId, account.externalUserId)) return null;
    const username = external.username ?? external.email ?? `${external.id}`;
    const details = await createHuman(es, {
      instanceId: instance.id,
      orgId,
      creator: "idp",
      box,
      human: {
        username,
        givenName: external.givenName ?? external.displayName ?? username,
        familyName: external.familyName ?? "-",
        ...(external.displayName ? { displayName: external.displayName } : {}),
        ...(external.preferredLanguage ? { preferredLanguage: external.preferredLanguage } : {}),
        email: external.email ?? "",
        emailVerified: external.emailVerified,
      },
      links: [account],
    });
    return kit.users.byId(instance.id, details.id);
  }

  /** What the provider sent without its raw answer and tokens: what a pending choice carries. */
  function withoutSecrets(external: ExternalUser | Pending["external"]): Pending["external"] {
    const { raw: _raw, tokens: _tokens, ...plain } = external as ExternalUser;
    return plain;
  }

  /** A pending choice sealed for this browser (its binding) and instance; undefined without a binding. */
  function sealPending(c: Ctx, instance: InstanceRow, pending: Pending): string | undefined {
    const binding = needs.bindingOf(c);
    return binding ? signer.seal("idp-account", { p: pending, b: binding, i: instance.id }, PENDING_TTL_MS) : undefined;
  }

  /** The page of choices the provider's options allow for an unknown external account, the user carried sealed. */
  function offer(c: Ctx, instance: InstanceRow, row: IdpRow, external: Pending["external"], options: IdpOptions) {
    const pending = sealPending(c, instance, { idpId: row.id, external });
    if (!pending) return failed(c, 400);
    return c.send(
      pages.externalAccountPage(c.page, {
        pending,
        provider: row.name,
        link: !!options.isLinkingAllowed,
        create: options.isCreationAllowed ? proposal(external) : undefined,
      }),
    );
  }

  const proposal = (e: Pending["external"]) => ({
    username: e.username ?? e.email ?? e.id,
    givenName: e.givenName ?? "",
    familyName: e.familyName ?? "",
    email: e.email ?? "",
  });

  /** The pending choice of this browser, with its provider still usable here and its options still allowing it. */
  async function pendingOf(c: Ctx, instance: InstanceRow, allows: Allows) {
    const sealed = signer.open("idp-account", c.fields.pending);
    const binding = needs.bindingOf(c);
    if (!sealed || sealed.i !== instance.id || !binding || sealed.b !== binding) return undefined;
    const pending = sealed.p as Pending;
    const row = await needs.usableProvider(c, instance, pending.idpId);
    if (!row || !allows((row.options ?? {}) as IdpOptions)) return undefined;
    const account: IdpLink = {
      idpId: row.id,
      externalUserId: pending.external.id,
      displayName: pending.external.username ?? pending.external.email ?? pending.external.id,
    };
    return { pending, row, account };
  }

  // The answer to the `auto_linking` prompt: "link" links the account found (if it still matches, the provider
  // still allows it there and the account is not linked to another of the provider's) and signs in; "other" goes on
  // as if nothing had matched.
  kit.post(`${LOGIN_PATH}/idp/autolink`, async (c, reply, instance) => {
    // "other" goes on even if the provider no longer offers matches meanwhile; "link" only while it does
    const found = await pendingOf(c, instance, c.fields.choice === "link" ? autoLinking : () => true);
    if (!found?.pending.foundUserId) return failed(c, 400);
    const { pending, row, account } = found;
    if (c.fields.choice !== "link") return withoutMatch(c, reply, instance, row, pending.external, account);
    const user = await autoLinked(c, instance, row.id, (row.options ?? {}) as IdpOptions, pending.external);
    if (!user || user.id !== pending.foundUserId || !(await allowedInOrg(instance, row, user.orgId))) return failed(c, 403);
    // A user linked to another account of this provider already keeps that link: no sign-in as it.
    if (!(await linkFoundAccount(es, { instanceId: instance.id, userId: user.id, creator: user.id, link: account }))) return failed(c, 409);
    return signedInAs(c, reply, instance, user, account, `fed:${account.idpId}`);
  });

  // "Link to my existing account": the user proves a local account here (its password, counted as the password
  // page counts it), which is then linked to the external one; the sign-in is with that password.
  kit.post(`${LOGIN_PATH}/idp/link`, async (c, reply, instance) => {
    const found = await pendingOf(c, instance, linkingAllowed);
    if (!found) return failed(c, 400);
    const loginName = (c.fields.loginName ?? "").trim().slice(0, 200);
    const user = await checkPassword(es, db, {
      ...kit.lockoutOf(instance.id),
      user: { loginName, settings },
      password: (c.fields.password ?? "").slice(0, 1000),
      limits: c.limits,
    });
    if (isTooManyFailures(user)) return c.tooMany(user);
    const again = (error: string, status: number) =>
      c.send(pages.externalAccountPage(c.page, { pending: String(c.fields.pending), provider: found.row.name, link: true, create: undefined, error }), status);
    if (user?.kind !== "human") return again(c.page.t.wrongCredentials, 401);
    if (!(await allowedInOrg(instance, found.row, user.orgId))) return failed(c, 403);
    // A password that must be changed signs nobody in until it is (the password page's rule): that first.
    if (user.passwordChangeRequired) return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.externalChangePasswordFirst), 403);
    // A user linked to another account of this provider keeps that link.
    if (await kit.users.byExternalAccount(instance.id, found.account.idpId, found.account.externalUserId)) return failed(c, 409);
    // The link is written when the sign-in completes (finish.ts), after the user's second factor: a password
    // alone links nothing.
    const link = Buffer.from(JSON.stringify(found.account)).toString("base64url");
    const signedIn: SignedInUser = { id: user.id, orgId: user.orgId, username: user.loginName, displayName: user.displayName ?? "" };
    return needs.afterFirstFactor(c, reply, instance, signedIn, `link:${link}`);
  });

  // "Create an account": the form pre-filled from the provider; the address is verified only as the provider said
  // and only if it is still the one it sent.
  kit.post(`${LOGIN_PATH}/idp/register`, async (c, reply, instance) => {
    const found = await pendingOf(c, instance, creationAllowed);
    if (!found) return failed(c, 400);
    const orgId = c.org?.id ?? instance.defaultOrgId;
    if (!orgId || !(await allowedInOrg(instance, found.row, orgId))) return failed(c, 403);
    const e = found.pending.external;
    const form = {
      username: (c.fields.username ?? "").trim().slice(0, 200),
      givenName: (c.fields.givenName ?? "").trim().slice(0, 200),
      familyName: (c.fields.familyName ?? "").trim().slice(0, 200),
      email: (c.fields.email ?? "").trim().slice(0, 200),
    };
    const again = (error: string, status: number) =>
      c.send(pages.externalAccountPage(c.page, { pending: String(c.fields.pending), provider: found.row.name, link: false, create: form, error }), status);
    if (await kit.users.externalAccountLinked(found.account.idpId, found.account.externalUserId)) return failed(c, 409);
    try {
      const details = await createHuman(es, {
        instanceId: instance.id,
        orgId,
        creator: "idp",
        box,
        human: {
          username: form.username,
          givenName: form.givenName,
          familyName: form.familyName,
          ...(e.displayName ? { displayName: e.displayName } : {}),
          ...(e.preferredLanguage ? { preferredLanguage: e.preferredLanguage } : {}),
          email: form.email,
          emailVerified: e.emailVerified && !!e.email && form.email.toLowerCase() === e.email.toLowerCase(),
        },
        links: [found.account],
      });
      const user = await kit.users.byId(instance.id, details.id);
      return user ? signedInAs(c, reply, instance, user, found.account, `fed:${found.account.idpId}`) : failed(c, 400);
    } catch (err) {
      // A taken username: the form again, saying so in the page's language; another refusal (an invalid address):
      // the form again with the server's message, which names the field.
      if (usernameUnavailable(err)) return again(c.page.t.usernameTaken, 400);
      if (!refusedWith(err, Code.InvalidArgument)) throw err;
      return again(err.rawMessage, 400);
    }
  });

  return { signInAs };
}
