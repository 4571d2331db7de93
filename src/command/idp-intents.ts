import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { SecretBox } from "../crypto/secrets.js";
import { dateOf } from "../domain/clock.js";
import type { EventStore } from "../eventstore/eventstore.js";
import { idpLoginSucceeded } from "../events/index.js";
import { newId } from "../ids.js";
import type { IdpLink } from "./idp-links.js";

/**
 * Sign-ins through an external identity provider on their way: started when the browser is sent to the provider,
 * taken once when its answer comes back. Like a pending authorization request, a row and no event (anyone may
 * start one); the sign-in that completes it is an event (`user.idp_login.succeeded`).
 */

/** How long the provider's round trip may take (the user signs in there meanwhile). */
export const INTENT_TTL_MS = 10 * 60_000;

const sha256 = (s: string) => createHash("sha256").update(s).digest("base64url");

/** What the callback needs back: the PKCE verifier and nonce it sent (a SAML request's ID), and where the login goes on. */
export interface TakenIntent {
  id: string;
  idpId: string;
  returnTo: string;
  codeVerifier: string;
  nonce: string;
  /** An intent of the intents API: where the browser goes next (else the login UI goes on). */
  api?: { successUrl: string; failureUrl: string };
  /** What the provider posted back (a SAML response), kept by `holdPostedAnswer`. */
  posted?: string;
}

/** How long a succeeded intent of the intents API may be retrieved and checked by a session. */
export const SUCCEEDED_INTENT_TTL_MS = 10 * 60_000;

/** What a provider said of its user, kept for the intents API's caller (sealed at rest). */
export interface IntentResult {
  idpId: string;
  /** The user's ID at the provider, and the name it goes by there. */
  externalUserId: string;
  externalUserName: string;
  raw: Record<string, unknown>;
  accessToken?: string | undefined;
  idToken?: string | undefined;
}

/**
 * Starts a round trip: the `state` sent to the provider finds it again, `binding` (a cookie of the browser)
 * ties it to that browser. Only hashes of both are stored; the verifier and nonce sealed.
 */
export async function startIntent(
  es: EventStore,
  box: SecretBox,
  a: {
    instanceId: string;
    idpId: string;
    state: string;
    /** Empty for an intent of the intents API: its caller's browser carries no cookie of ours. */
    binding: string;
    codeVerifier: string;
    nonce: string;
    returnTo: string;
    api?: { successUrl: string; failureUrl: string };
  },
): Promise<string> {
  const id = newId();
  const now = es.clock.now();
  await es.execute((w) =>
    w.tx.idpIntent.create({
      data: {
        id,
        instanceId: a.instanceId,
        idpId: a.idpId,
        stateHash: sha256(a.state),
        bindingHash: a.binding ? sha256(a.binding) : "",
        secrets: box.seal(JSON.stringify({ v: a.codeVerifier, n: a.nonce })),
        returnTo: a.returnTo,
        successUrl: a.api?.successUrl ?? "",
        failureUrl: a.api?.failureUrl ?? "",
        state: "started",
        createdAt: new Date(now),
        expiresAt: new Date(now + INTENT_TTL_MS),
      },
    }),
  );
  // The ended ones now and then, as the authorization requests' (nobody can complete them).
  if (Math.random() < 0.01) void es.execute((w) => w.tx.idpIntent.deleteMany({ where: { expiresAt: { lt: dateOf(es.clock) } } })).catch(() => undefined);
  return id;
}

/**
 * Takes the intent of `state` once: only in the browser that started it (`binding`; an intent of the intents
 * API has none), in its instance, before it expired, and only the first time (a replayed answer finds it used).
 * Undefined otherwise.
 */
export async function takeIntent(
  es: EventStore,
  box: SecretBox,
  a: { instanceId: string; state: string; binding: string | undefined },
): Promise<TakenIntent | undefined> {
  const { result } = await es.execute(async (w) => {
    const where = {
      stateHash: sha256(a.state),
      bindingHash: { in: a.binding ? ["", sha256(a.binding)] : [""] },
      instanceId: a.instanceId,
      state: "started",
      expiresAt: { gt: dateOf(es.clock) },
    };
    const taken = await w.tx.idpIntent.updateMany({ where, data: { state: "used" } });
    if (taken.count !== 1) return undefined;
    return w.tx.idpIntent.findUnique({ where: { stateHash: where.stateHash } });
  });
  if (!result) return undefined;
  const secrets = JSON.parse(box.open(result.secrets)) as { v: string; n: string };
  return {
    id: result.id,
    idpId: result.idpId,
    returnTo: result.returnTo,
    codeVerifier: secrets.v,
    nonce: secrets.n,
    ...(result.successUrl ? { api: { successUrl: result.successUrl, failureUrl: result.failureUrl } } : {}),
    ...(result.result ? { posted: box.open(result.result) } : {}),
  };
}

/**
 * Keeps what a provider posted back (a SAML response at the ACS, an answer by `response_mode=form_post`) with its started round trip, once, until the
 * browser arrives at the callback: the cross-site POST carries none of the browser's SameSite cookies, the
 * redirect to the callback that follows does (a top-level GET). False when no such round trip is waiting.
 */
export async function holdPostedAnswer(
  es: EventStore,
  box: SecretBox,
  /** `idpId`: the provider the answer must be for, when the address it was posted to names one (SAML's ACS). */
  a: { instanceId: string; idpId?: string; state: string; answer: string },
): Promise<boolean> {
  const { result } = await es.execute((w) =>
    w.tx.idpIntent.updateMany({
      where: {
        stateHash: sha256(a.state),
        instanceId: a.instanceId,
        ...(a.idpId ? { idpId: a.idpId } : {}),
        state: "started",
        result: null,
        expiresAt: { gt: dateOf(es.clock) },
      },
      data: { result: box.seal(a.answer) },
    }),
  );
  return result.count === 1;
}

/**
 * An intent of the intents API whose provider vouched for a user: the result kept sealed for its caller, who
 * proves it with the token returned here (only its SHA-256 is kept), for SUCCEEDED_INTENT_TTL_MS. A new intent
 * when `id` is undefined (a directory answers at once).
 */
export async function succeedIntent(
  es: EventStore,
  box: SecretBox,
  a: { instanceId: string; id?: string | undefined; result: IntentResult },
): Promise<{ id: string; token: string }> {
  const token = randomBytes(32).toString("base64url");
  const now = es.clock.now();
  const data = {
    state: "succeeded",
    tokenHash: sha256(token),
    result: box.seal(JSON.stringify(a.result)),
    expiresAt: new Date(now + SUCCEEDED_INTENT_TTL_MS),
  };
  const id = a.id ?? newId();
  await es.execute((w) =>
    a.id
      ? w.tx.idpIntent.update({ where: { id }, data })
      : w.tx.idpIntent.create({
          data: {
            ...data,
            id,
            instanceId: a.instanceId,
            idpId: a.result.idpId,
            stateHash: sha256(randomBytes(32).toString("base64url")),
            bindingHash: "",
            secrets: "",
            returnTo: "",
            createdAt: new Date(now),
          },
        }),
  );
  return { id, token };
}

/**
 * The login UI's way on after a round trip's callback (src/login/idp.ts continueAt), once: a `used` round trip
 * becomes `continued`. False when it was continued already (a replayed continue URL).
 */
export async function continueIntent(es: EventStore, a: { instanceId: string; id: string }): Promise<boolean> {
  const { result } = await es.execute((w) =>
    w.tx.idpIntent.updateMany({ where: { id: a.id, instanceId: a.instanceId, state: "used" }, data: { state: "continued" } }),
  );
  return result.count === 1;
}

/** The provider of the round trip of `state` that waits for its answer (started, nothing held, unexpired), if any. */
export async function waitingIntentProvider(es: EventStore, a: { instanceId: string; state: string }): Promise<string | undefined> {
  const { result } = await es.execute((w) =>
    w.tx.idpIntent.findFirst({
      where: { stateHash: sha256(a.state), instanceId: a.instanceId, state: "started", result: null, expiresAt: { gt: dateOf(es.clock) } },
      select: { idpId: true },
    }),
  );
  return result?.idpId;
}

/** An intent whose provider refused, or whose answer did not hold: nothing can be retrieved from it. */
export async function failIntent(es: EventStore, id: string): Promise<void> {
  await es.execute((w) => w.tx.idpIntent.update({ where: { id }, data: { state: "failed" } }));
}

const tokenMatches = (storedHash: string | null, token: string) => {
  const given = Buffer.from(sha256(token));
  const stored = Buffer.from(storedHash ?? "");
  return stored.length === given.length && timingSafeEqual(stored, given);
};

/**
 * The result of a succeeded intent for the holder of its token (compared in constant time), in its instance,
 * unexpired; `consume` uses it up (a session's check: single use). Undefined otherwise, whatever the reason.
 */
export async function intentResult(
  es: EventStore,
  box: SecretBox,
  a: { instanceId: string; id: string; token: string; consume: boolean },
): Promise<IntentResult | undefined> {
  const { result } = await es.execute(async (w) => {
    const row = await w.tx.idpIntent.findFirst({
      where: { id: a.id, instanceId: a.instanceId, state: "succeeded", expiresAt: { gt: dateOf(es.clock) } },
    });
    if (!row?.result || !tokenMatches(row.tokenHash, a.token)) return undefined;
    if (a.consume) {
      const used = await w.tx.idpIntent.updateMany({ where: { id: row.id, state: "succeeded" }, data: { state: "consumed" } });
      if (used.count !== 1) return undefined;
    }
    return row.result;
  });
  return result ? (JSON.parse(box.open(result)) as IntentResult) : undefined;
}

/** Records a sign-in through a provider (which provider, which external account; never a provider token). */
export async function recordIdpLogin(es: EventStore, a: { instanceId: string; userId: string; orgId: string; account: IdpLink }) {
  await es.execute((w) =>
    w.push(a.instanceId, a.userId, [
      idpLoginSucceeded.event({ aggregateId: a.userId, resourceOwner: a.orgId }, { idpId: a.account.idpId, externalUserId: a.account.externalUserId }),
    ]),
  );
}
