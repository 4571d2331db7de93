import { errors } from "../errors/errors.js";
/**
 * Authorization requests of the OIDC provider, from the authorize endpoint to the code's redemption:
 * pending (stored), succeeded (a user signed in; a code may be issued), exchanged (the code was redeemed).
 */
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
} from "./events.js";

/** Stores a validated authorization request; returns its ID, which the login UI carries back to the callback. */
export async function addAuthRequest(es: EventStore, a: { instanceId: string; clientId: string; request: object; expiresAt: Date }): Promise<string> {
  const id = newId();
  await es.execute((w) =>
    w.push(a.instanceId, a.clientId, [
      authRequestAdded.event(
        { aggregateId: id, resourceOwner: a.instanceId },
        { clientId: a.clientId, request: a.request, expiresAt: a.expiresAt.toISOString() },
      ),
    ]),
  );
  return id;
}

/** How long an authorization code may be redeemed. */
export const CODE_LIFETIME_MS = 5 * 60_000;

/**
 * A user signed in for the request: it succeeds, with the hash of the code when one is issued. With
 * `onlyPending`, decided under the request's lock: a request no longer pending is FAILED_PRECONDITION (two
 * callbacks for one request cannot both issue a code).
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
    onlyPending?: boolean;
  },
): Promise<void> {
  await es.execute(async (w) => {
    if (a.onlyPending) {
      await w.lock(a.instanceId, "auth_request", a.id);
      const row = await w.tx.authRequest.findUnique({ where: { id: a.id }, select: { state: true } });
      if (row?.state !== "pending") throw errors.failedPrecondition("AUTHR-d0ne", "the authorization request was completed already");
    }
    await w.push(a.instanceId, a.userId, [
      authRequestSucceeded.event(
        { aggregateId: a.id, resourceOwner: a.instanceId },
        {
          userId: a.userId,
          sessionId: a.sessionId,
          authTime: a.authTime.toISOString(),
          codeHash: a.codeHash,
          expiresAt: a.expiresAt.toISOString(),
          amr: a.amr,
        },
      ),
    ]);
  });
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

export function registerAuthRequestReducers(es: EventStore): void {
  es.on(authRequestAdded, async (tx, e) => {
    const p = e.payload;
    await tx.authRequest.create({
      data: {
        id: e.aggregateId,
        instanceId: e.instanceId,
        clientId: p.clientId,
        request: p.request,
        state: "pending",
        createdAt: e.createdAt,
        expiresAt: new Date(p.expiresAt),
      },
    });
  });
  es.on(authRequestSucceeded, async (tx, e) => {
    const p = e.payload;
    // The methods the user proved go with the stored request, where the code grant reads them (`amr`).
    const row = p.amr ? await tx.authRequest.findUnique({ where: { id: e.aggregateId }, select: { request: true } }) : null;
    await tx.authRequest.update({
      where: { id: e.aggregateId },
      data: {
        ...(row && p.amr ? { request: { ...(row.request as object), amr: p.amr } } : {}),
        state: "succeeded",
        userId: p.userId,
        sessionId: p.sessionId,
        authTime: new Date(p.authTime),
        codeHash: p.codeHash,
        expiresAt: new Date(p.expiresAt),
      },
    });
  });
  es.on(authRequestCodeExchanged, async (tx, e) => {
    await tx.authRequest.update({ where: { id: e.aggregateId }, data: { state: "exchanged" } });
  });
  es.on(authRequestTokensIssued, async (tx, e) => {
    await tx.authRequest.update({ where: { id: e.aggregateId }, data: { issued: e.payload.issued } });
  });
}
