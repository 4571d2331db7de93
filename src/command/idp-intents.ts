import { createHash } from "node:crypto";
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

/** What the callback needs back: the PKCE verifier and nonce it sent, and where the login goes on. */
export interface TakenIntent {
  id: string;
  idpId: string;
  returnTo: string;
  codeVerifier: string;
  nonce: string;
}

/**
 * Starts a round trip: the `state` sent to the provider finds it again, `binding` (a cookie of the browser)
 * ties it to that browser. Only hashes of both are stored; the verifier and nonce sealed.
 */
export async function startIntent(
  es: EventStore,
  box: SecretBox,
  a: { instanceId: string; idpId: string; state: string; binding: string; codeVerifier: string; nonce: string; returnTo: string },
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
        bindingHash: sha256(a.binding),
        secrets: box.seal(JSON.stringify({ v: a.codeVerifier, n: a.nonce })),
        returnTo: a.returnTo,
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
 * Takes the intent of `state` once: only in the browser that started it (`binding`), in its instance, before it
 * expired, and only the first time (a replayed answer finds it used). Undefined otherwise.
 */
export async function takeIntent(es: EventStore, box: SecretBox, a: { instanceId: string; state: string; binding: string }): Promise<TakenIntent | undefined> {
  const { result } = await es.execute(async (w) => {
    const where = {
      stateHash: sha256(a.state),
      bindingHash: sha256(a.binding),
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
  return { id: result.id, idpId: result.idpId, returnTo: result.returnTo, codeVerifier: secrets.v, nonce: secrets.n };
}

/** Records a sign-in through a provider (which provider, which external account; never a provider token). */
export async function recordIdpLogin(es: EventStore, a: { instanceId: string; userId: string; orgId: string; account: IdpLink }) {
  await es.execute((w) =>
    w.push(a.instanceId, a.userId, [
      idpLoginSucceeded.event({ aggregateId: a.userId, resourceOwner: a.orgId }, { idpId: a.account.idpId, externalUserId: a.account.externalUserId }),
    ]),
  );
}
