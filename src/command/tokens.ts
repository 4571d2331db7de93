import { dateOf } from "../domain/clock.js";
import type { EventStore } from "../eventstore/eventstore.js";
import { graceAnswer } from "../query/tokens.js";
import { accessTokenRevoked, refreshTokenRenewed, refreshTokenRevoked, type RefreshRotation } from "../events/index.js";

/** An access token to revoke: its ID, and its expiry in seconds (the revocation is kept until then). */
export type AccessTokenRef = { jti: string; exp: number };

/** The revocation events of the access tokens that have not expired yet (an expired one is refused anyway). */
function accessRevocations(instanceId: string, tokens: AccessTokenRef[], now: number) {
  return tokens.filter((t) => t.exp * 1000 > now).map((t) => accessTokenRevoked.event({ aggregateId: t.jti, resourceOwner: instanceId }, { exp: t.exp }));
}

/** Revokes access tokens by their IDs. */
export async function revokeAccessTokens(es: EventStore, a: { instanceId: string; tokens: AccessTokenRef[]; creator: string }): Promise<void> {
  const events = accessRevocations(a.instanceId, a.tokens, es.clock.now());
  if (!events.length) return;
  await es.execute((w) => w.push(a.instanceId, a.creator, events));
}

/** Revokes a refresh token (its grant) and the access token issued with it; one already revoked stays as it is. */
export async function revokeRefreshToken(es: EventStore, a: { instanceId: string; id: string; creator: string }): Promise<void> {
  await es.execute(async (w) => {
    await w.lock(a.instanceId, "refresh_token", a.id);
    const row = await w.tx.refreshToken.findUnique({ where: { id: a.id } });
    if (!row || row.instanceId !== a.instanceId || row.revoked) return;
    await w.tx.refreshTokenGrace.deleteMany({ where: { refreshTokenId: a.id } });
    await w.push(a.instanceId, a.creator, [
      refreshTokenRevoked.event({ aggregateId: a.id, resourceOwner: a.instanceId }),
      ...accessRevocations(a.instanceId, [{ jti: row.accessJti, exp: Math.floor(row.accessExpires.getTime() / 1000) }], w.clock.now()),
    ]);
  });
}

/**
 * What a rotation did: renewed the token (this use was the first), or not, and then, when a concurrent use of
 * the same token renewed it within its grace window, that use's sealed answer to give again.
 */
export type Renewal = { renewed: true } | { renewed: false; replay: string | undefined };

/**
 * Rotates a refresh token under its lock: of several uses of one token only the first renews it. With a grace
 * window (`grace`: the answer sealed, and until when), the answer is kept beside the token, in the same
 * transaction but not as an event (it changes no resource and must not outlive the window): the other uses,
 * which queue behind the lock, and retries within the window get that same answer instead of an error.
 */
export async function renewRefreshToken(
  es: EventStore,
  a: {
    instanceId: string;
    id: string;
    creator: string;
    resourceOwner: string;
    presentedHash: string;
    rotation: RefreshRotation;
    grace?: { response: string; expiresAt: Date };
  },
): Promise<Renewal> {
  const { result } = await es.execute(async (w): Promise<Renewal> => {
    await w.lock(a.instanceId, "refresh_token", a.id);
    const row = await w.tx.refreshToken.findUnique({ where: { id: a.id } });
    if (!row || row.instanceId !== a.instanceId || row.revoked) return { renewed: false, replay: undefined };
    if (row.tokenHash !== a.presentedHash) {
      const grace = await w.tx.refreshTokenGrace.findUnique({ where: { refreshTokenId: a.id } });
      return { renewed: false, replay: graceAnswer(grace, row, a.presentedHash) };
    }
    await w.push(a.instanceId, a.creator, [refreshTokenRenewed.event({ aggregateId: a.id, resourceOwner: a.resourceOwner }, a.rotation)]);
    if (a.grace) {
      const grace = { presentedHash: a.presentedHash, successorHash: a.rotation.tokenHash, response: a.grace.response, expiresAt: a.grace.expiresAt };
      await w.tx.refreshTokenGrace.upsert({
        where: { refreshTokenId: a.id },
        create: { refreshTokenId: a.id, instanceId: a.instanceId, ...grace },
        update: grace,
      });
    } else {
      await w.tx.refreshTokenGrace.deleteMany({ where: { refreshTokenId: a.id } });
    }
    return { renewed: true };
  });
  // The answers of windows that have closed are of no use: an occasional sweep (its own statement, outside the
  // rotation's transaction and lock) keeps the table small.
  if (result.renewed && Math.random() < 0.02) {
    await es
      .execute((w) => w.tx.refreshTokenGrace.deleteMany({ where: { instanceId: a.instanceId, expiresAt: { lt: dateOf(es.clock) } } }))
      .catch(() => undefined);
  }
  return result;
}
