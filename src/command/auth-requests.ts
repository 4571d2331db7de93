/**
 * Authorization requests of the OIDC provider, from the authorize endpoint to the code's redemption:
 * pending (stored), succeeded (a user signed in; a code may be issued), exchanged (the code was redeemed).
 *
 * A pending request is no event (security review #22): anyone may start one without signing in, and an event
 * would keep each for ever. Its row is written straight into `auth_requests`, where the login UI, the callback and
 * the sessions API read it, and deleted once it expired unused (`sweepExpiredRequests`). The request's event
 * `oidc.auth_request.added` is appended when a user signs in for it, together with `oidc.auth_request.succeeded`:
 * the log keeps the requests someone signed in for, and no others.
 */
import { dateOf } from "../domain/clock.js";
import type { EventStore } from "../eventstore/eventstore.js";
import { newId } from "../ids.js";
import {
  authRequestAdded,
  authRequestCodeExchanged,
  authRequestSucceeded,
  authRequestTokensIssued,
  refreshTokenAdded,
  type IssuedByCode,
  type RefreshGrant,
  type RefreshRotation,
} from "../events/index.js";

/** Of the authorize requests, those that also delete the expired pending ones: often enough to keep few. */
const SWEEP_CHANCE = 0.01;

/**
 * Stores a validated authorization request, pending until a user signs in for it or it expires; returns its ID,
 * which the login UI carries back to the callback. A row of the projection table, no event (see above).
 */
export async function addAuthRequest(es: EventStore, a: { instanceId: string; clientId: string; request: object; expiresAt: Date }): Promise<string> {
  const id = newId();
  // The real time, not the clock's: the callback compares it with the session's auth time (`staleSignIn`), which
  // is its event's created_at, set by the database. On the moved clock of a test, a sign-in made for the request
  // would look older than the request. (The expiry, `expiresAt`, is the clock's, as are its checks below.)
  await es.execute((w) =>
    w.tx.authRequest.create({
      data: { id, instanceId: a.instanceId, clientId: a.clientId, request: a.request, state: "pending", createdAt: new Date(), expiresAt: a.expiresAt },
    }),
  );
  if (Math.random() < SWEEP_CHANCE) void sweepExpiredRequests(es).catch(() => undefined);
  return id;
}

/** Deletes the pending requests that expired unused (index `auth_requests_state_expires_at_idx`): nobody can complete them. */
export async function sweepExpiredRequests(es: EventStore): Promise<number> {
  const { result } = await es.execute((w) => w.tx.authRequest.deleteMany({ where: { state: "pending", expiresAt: { lt: dateOf(es.clock) } } }));
  return result.count;
}

/** How long an authorization code may be redeemed. */
export const CODE_LIFETIME_MS = 5 * 60_000;

/**
 * A user signed in for the request: it succeeds, with the hash of the code when one is issued, and its events
 * are appended (added, then succeeded). Decided under the request's lock: false when it is no longer pending
 * (completed, expired or swept), so that two callbacks for one request cannot both issue a code.
 */
export async function succeedAuthRequest(
  es: EventStore,
  a: {
    instanceId: string;
    id: string;
    userId: string;
    sessionId: string;
    authTime: Date;
    amr: string[];
    codeHash: string | null;
    expiresAt: Date;
  },
): Promise<boolean> {
  const { result } = await es.execute(async (w) => {
    await w.lock(a.instanceId, "auth_request", a.id);
    const row = await w.tx.authRequest.findUnique({ where: { id: a.id } });
    if (row?.instanceId !== a.instanceId || row.state !== "pending" || row.expiresAt.getTime() <= w.clock.now()) return false;
    const ref = { aggregateId: a.id, resourceOwner: a.instanceId };
    // A request stored while "added" was still appended at authorize (before the upgrade) has it already.
    const added = (await w.sequenceOf(a.instanceId, "auth_request", a.id)) > 0;
    await w.push(a.instanceId, a.userId, [
      ...(added ? [] : [authRequestAdded.event(ref, { clientId: row.clientId, request: row.request as object, expiresAt: row.expiresAt.toISOString() })]),
      authRequestSucceeded.event(ref, {
        userId: a.userId,
        sessionId: a.sessionId,
        authTime: a.authTime.toISOString(),
        codeHash: a.codeHash,
        expiresAt: a.expiresAt.toISOString(),
        amr: a.amr,
      }),
    ]);
    return true;
  });
  return result;
}

/** The outcome of a code's redemption: the code is used up now, or was already (with what its first use gave). */
export type CodeExchange = { exchanged: true } | { exchanged: false; issued: IssuedByCode | undefined };

/** Uses up the request's code under the request's lock: of two redemptions exactly one wins. */
export async function exchangeCode(es: EventStore, a: { instanceId: string; id: string; creator: string }): Promise<CodeExchange> {
  const { result } = await es.execute(async (w): Promise<CodeExchange> => {
    await w.lock(a.instanceId, "auth_request", a.id);
    const row = await w.tx.authRequest.findUnique({ where: { id: a.id } });
    if (!row || row.instanceId !== a.instanceId || row.state !== "succeeded") {
      return { exchanged: false, issued: (row?.issued ?? undefined) as IssuedByCode | undefined };
    }
    await w.push(a.instanceId, a.creator, [authRequestCodeExchanged.event({ aggregateId: a.id, resourceOwner: a.instanceId })]);
    return { exchanged: true };
  });
  return result;
}

/**
 * Records what a code gave, so that a second redemption can revoke it; with the refresh token it gave, which
 * is added in the same transaction. Returns the refresh token's ID.
 */
export async function recordIssuedByCode(
  es: EventStore,
  a: {
    instanceId: string;
    id: string;
    creator: string;
    access: { jti: string; exp: number };
    refresh?: { resourceOwner: string; rotation: RefreshRotation; grant: RefreshGrant };
  },
): Promise<string | undefined> {
  const refreshId = a.refresh ? newId() : undefined;
  const issued: IssuedByCode = { accessJti: a.access.jti, accessExp: a.access.exp, ...(refreshId ? { refreshId } : {}) };
  await es.execute((w) =>
    w.push(a.instanceId, a.creator, [
      ...(a.refresh
        ? [refreshTokenAdded.event({ aggregateId: refreshId!, resourceOwner: a.refresh.resourceOwner }, { ...a.refresh.rotation, ...a.refresh.grant })]
        : []),
      authRequestTokensIssued.event({ aggregateId: a.id, resourceOwner: a.instanceId }, { issued }),
    ]),
  );
  return refreshId;
}
