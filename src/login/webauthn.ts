import { Code } from "@connectrpc/connect";
import type { FastifyReply } from "fastify";
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import { hostnameOf } from "../authz/interceptor.js";
import {
  finishWebauthnLogin,
  finishWebauthnRegistration,
  listWebauthnKeys,
  type RelyingParty,
  startWebauthnLogin,
  startWebauthnRegistration,
  type WebauthnPurpose,
} from "../command/webauthn.js";
import type { InstanceRow } from "../query/tenancy.js";
import * as pages from "../web/pages.js";
import { webauthnPage, webauthnScript } from "../web/webauthn-pages.js";
import type { Finish } from "./finish.js";
import { type Ctx, type FirstFactor, firstFactorOf, LOGIN_PATH, type LoginKit, refusedWith, type SecondFactorStep, type SignedInUser } from "./kit.js";

/**
 * A ceremony's challenge, sealed into the page, is good for as long as the browser's prompt (5 minutes) and a bit,
 * and for one answer (see `firstAnswer`).
 */
const CEREMONY_TTL_MS = 10 * 60_000;

/** The security-key step after the password, and the key set-up a sign-in may have to go through. */
export interface WebauthnStep extends SecondFactorStep {
  /** A forced second factor when security keys are the only one allowed: register one before the sign-in completes. */
  setupAtSignIn(c: Ctx, reply: FastifyReply, instance: InstanceRow, user: SignedInUser, pending: string): Promise<unknown>;
}

/** The relying party as this request reached the server: its host name is the RP ID, scheme and host the origin. */
function relyingPartyOf(reply: FastifyReply, instance: InstanceRow): RelyingParty {
  const { host, secure } = reply.request.client;
  return { id: hostnameOf(host), origin: `${secure ? "https" : "http"}://${host}`, name: instance.name };
}

/** The credential the page's script posted, or undefined for anything that is not a JSON object. */
function credentialOf<T>(fields: Record<string, string>): T | undefined {
  try {
    const v: unknown = JSON.parse(fields.credential ?? "");
    // The shape is the library's to check: it refuses what is not a credential.
    return v && typeof v === "object" && !Array.isArray(v) ? (v as T) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Security keys (second factor "u2f": after the password, amr pwd, hwk, mfa) and passkeys (passwordless, when
 * the login settings allow it: amr user, hwk, mfa — a passkey with user verification is two factors, possession
 * and the PIN or biometric, as ZITADEL counts passwordless as multi-factor), and their registration from the
 * signed-in page or at the second-factor set-up of a sign-in. Each ceremony's challenge is sealed into its form.
 */
export function registerWebauthn(kit: LoginKit, finish: Finish): WebauthnStep {
  const { ui, deps } = kit;
  const { es, db, signer } = deps;
  const { users, loginSettings } = kit;
  const startOver = (c: Ctx, status = 401) => c.send(pages.loginNamePage(c.page, { canRegister: false, error: c.page.t.wrongCredentials }), status);
  /**
   * Uses up the challenge of an opened ceremony; false when it was answered before. The signature counter does not
   * stop a resubmitted or captured form: synced passkeys report 0 at every use, and then it is not checked. Used up
   * before the answer is verified, so that two posts at once cannot both pass; a wrong answer gets a new challenge.
   */
  const firstAnswer = (proof: Record<string, unknown>) => deps.replay.firstUse(`webauthn:${String(proof.i)}:${String(proof.ch)}`, Number(proof.exp) / 1000);

  ui.get(`${LOGIN_PATH}/webauthn.js`, async (_req, reply) =>
    reply.type("text/javascript; charset=utf-8").header("cache-control", "public, max-age=3600").send(webauthnScript),
  );

  /**
   * A sign-in ceremony's page, its challenge sealed into the form: the security key after the password (`user`:
   * the signed-in user's keys) or a passkey (no user: the authenticator offers its passkeys for this RP ID). A
   * wrong answer comes back to it with `error` (401) and a new challenge.
   */
  async function signInPage(c: Ctx, reply: FastifyReply, instance: InstanceRow, user: SignedInUser | undefined, error?: string, first: FirstFactor = "pwd") {
    const rp = relyingPartyOf(reply, instance);
    const options = await startWebauthnLogin(db, { instanceId: instance.id, userId: user?.id, rp, purpose: user ? "u2f" : "passwordless" });
    const challenge = { i: instance.id, ch: options.challenge };
    const t = c.page.t;
    const step = user
      ? {
          pending: signer.seal("webauthn-2fa", { u: user.id, f1: first, ...challenge }, CEREMONY_TTL_MS),
          texts: { title: t.webauthnTitle, intro: t.webauthnIntro, action: `${LOGIN_PATH}/webauthn/login`, loginName: user.username },
        }
      : {
          pending: signer.seal("passkey", challenge, CEREMONY_TTL_MS),
          texts: { title: t.passkeySignIn, intro: t.passkeyIntro, action: `${LOGIN_PATH}/passkey` },
        };
    const page = webauthnPage(c.page, { ...step.texts, mode: "get", options, extra: { pending: step.pending }, ...(error ? { error } : {}) });
    return c.send(page, error ? 401 : 200);
  }

  kit.post(`${LOGIN_PATH}/webauthn/login`, async (c, reply, instance) => {
    const proof = signer.open("webauthn-2fa", c.fields.pending);
    const user = proof && proof.i === instance.id ? await users.byId(instance.id, String(proof.u)) : null;
    if (user?.state !== "active") return startOver(c);
    const response = credentialOf<AuthenticationResponseJSON>(c.fields);
    const rp = relyingPartyOf(reply, instance);
    const ok =
      response &&
      (await firstAnswer(proof!)) &&
      (await finishWebauthnLogin(es, db, { instanceId: instance.id, userId: user.id, rp, challenge: String(proof!.ch), purpose: "u2f", response }));
    if (!ok) return signInPage(c, reply, instance, user, c.page.t.webauthnWrong, firstFactorOf(proof));
    return finish(c, reply, instance, user, [firstFactorOf(proof), "hwk", "mfa"]);
  });

  const notAllowed = (c: Ctx) => c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.notFound), 404);

  // Passwordless: no login name, the authenticator offers its passkeys for this RP ID.
  ui.get(`${LOGIN_PATH}/passkey`, async (req, reply) => {
    const c = await kit.contextOf(req, reply);
    if (!c.instance || !(await loginSettings(c.instance.id)).passwordless_allowed) return notAllowed(c);
    return signInPage(c, reply, c.instance, undefined);
  });

  kit.post(`${LOGIN_PATH}/passkey`, async (c, reply, instance) => {
    const proof = signer.open("passkey", c.fields.pending);
    if (!proof || proof.i !== instance.id || !(await loginSettings(instance.id)).passwordless_allowed) return notAllowed(c);
    const response = credentialOf<AuthenticationResponseJSON>(c.fields);
    const rp = relyingPartyOf(reply, instance);
    const found =
      response &&
      (await firstAnswer(proof)) &&
      (await finishWebauthnLogin(es, db, { instanceId: instance.id, rp, challenge: String(proof.ch), purpose: "passwordless", response }));
    const user = found ? await users.byId(instance.id, found.userId) : null;
    // The user's organisation may turn passwordless off even where the instance allows it.
    // As every sign-in: the user able to act (active, in an active organisation).
    if (!user || !(await deps.tenancy.usableUser(user.id)) || !(await loginSettings(instance.id, user.orgId)).passwordless_allowed) {
      return signInPage(c, reply, instance, undefined, c.page.t.webauthnWrong);
    }
    return finish(c, reply, instance, user, ["user", "hwk", "mfa"]);
  });

  /** Who registers: a signed-in account of this browser (sessionId) or a sign-in at its second-factor set-up (pending). */
  async function registrantOf(c: Ctx, instance: InstanceRow) {
    if (c.fields.pending) {
      const pending = await kit.mfaInitPending(c, instance);
      return pending
        ? { user: pending.user, first: pending.first as FirstFactor | undefined, extra: { pending: String(c.fields.pending) } as Record<string, string> }
        : undefined;
    }
    const account = await kit.accountOf(c, instance.id);
    const user = account ? await users.byId(instance.id, account.userId) : null;
    return user ? { user, account, first: undefined, extra: { sessionId: account!.sessionId } as Record<string, string> } : undefined;
  }

  async function allowed(instanceId: string, orgId: string, purpose: WebauthnPurpose) {
    const login = await loginSettings(instanceId, orgId);
    return purpose === "passwordless" ? login.passwordless_allowed : login.second_factors.includes("u2f");
  }

  kit.post(`${LOGIN_PATH}/webauthn/setup`, async (c, reply, instance) => {
    const who = await registrantOf(c, instance);
    if (!who) return startOver(c, 400);
    if ("account" in who && who.account && !(await kit.signedInRecently(c, who.account))) return;
    const purpose: WebauthnPurpose = c.fields.purpose === "passwordless" ? "passwordless" : "u2f";
    if (!(await allowed(instance.id, who.user.orgId, purpose))) return notAllowed(c);
    return setupPage(c, reply, instance, who.user, purpose, who.extra);
  });

  /** The registration ceremony's page; `extra` says whose (sessionId of a signed-in account, or a sign-in's pending). */
  async function setupPage(c: Ctx, reply: FastifyReply, instance: InstanceRow, user: SignedInUser, purpose: WebauthnPurpose, extra: Record<string, string>) {
    const rp = relyingPartyOf(reply, instance);
    const options = await startWebauthnRegistration(db, { instanceId: instance.id, user, rp, purpose });
    const ceremony = signer.seal("webauthn-setup", { u: user.id, i: instance.id, ch: options.challenge, p: purpose }, CEREMONY_TTL_MS);
    const t = c.page.t;
    return c.send(
      webauthnPage(c.page, {
        title: purpose === "passwordless" ? t.webauthnAddPasskey : t.webauthnAddKey,
        intro: t.webauthnSetupIntro,
        mode: "create",
        options,
        action: `${LOGIN_PATH}/webauthn/setup/verify`,
        extra: { ...extra, ceremony },
      }),
    );
  }

  kit.post(`${LOGIN_PATH}/webauthn/setup/verify`, async (c, reply, instance) => {
    const who = await registrantOf(c, instance);
    const proof = signer.open("webauthn-setup", c.fields.ceremony);
    if (!who || !proof || proof.i !== instance.id || proof.u !== who.user.id) return startOver(c, 400);
    const purpose: WebauthnPurpose = proof.p === "passwordless" ? "passwordless" : "u2f";
    const response = credentialOf<RegistrationResponseJSON>(c.fields);
    const refused = () => c.send(pages.messagePage(c.page, c.page.t.webauthnTitle, c.page.t.webauthnWrong), 400);
    if (!response || !(await firstAnswer(proof))) return refused();
    try {
      await finishWebauthnRegistration(es, {
        instanceId: instance.id,
        userId: who.user.id,
        creator: who.user.id,
        rp: relyingPartyOf(reply, instance),
        challenge: String(proof.ch),
        purpose,
        name: "",
        response,
      });
    } catch (e) {
      if (!refusedWith(e, Code.InvalidArgument, Code.AlreadyExists)) throw e;
      return refused();
    }
    // At the set-up of a sign-in, the key just registered is the second factor of this sign-in.
    if (who.first) return finish(c, reply, instance, who.user, [who.first, "hwk", "mfa"]);
    return c.send(pages.messagePage(c.page, c.page.t.webauthnTitle, c.page.t.webauthnAdded));
  });

  return {
    setupAtSignIn(c, reply, instance, user, pending) {
      return setupPage(c, reply, instance, user, "u2f", { pending });
    },
    /** The security-key step after the password, when allowed and the user has one. */
    async offer(c, reply, instance, user, allowedFactors, first) {
      if (!allowedFactors.includes("u2f")) return false;
      if (!(await listWebauthnKeys(db, instance.id, user.id, "u2f")).length) return false;
      await signInPage(c, reply, instance, user, undefined, first);
      return true;
    },
  };
}
