import type { EventStore } from "../eventstore/eventstore.js";
import { accessTokenRevoked, refreshTokenAdded, refreshTokenRenewed, refreshTokenRevoked, type RefreshRotation } from "./events.js";

/** An access token to revoke: its ID, and its expiry in seconds (the revocation is kept until then). */
export type AccessTokenRef = { jti: string; exp: number };

/** The revocation events of the access tokens that have not expired yet (an expired one is refused anyway). */
function accessRevocations(instanceId: string, tokens: AccessTokenRef[]) {
  return tokens
    .filter((t) => t.exp * 1000 > Date.now())
    .map((t) => accessTokenRevoked.event({ aggregateId: t.jti, resourceOwner: instanceId }, { exp: t.exp }));
}

/** Revokes access tokens by their IDs. */
export async function revokeAccessTokens(es: EventStore, a: { instanceId: string; tokens: AccessTokenRef[]; creator: string }): Promise<void> {
  const events = accessRevocations(a.instanceId, a.tokens);
  if (!events.length) return;
  await es.execute((w) => w.push(a.instanceId, a.creator, events));
}

/** Revokes a refresh token (its grant) and the access token issued with it; one already revoked stays as it is. */
export async function revokeRefreshToken(es: EventStore, a: { instanceId: string; id: string; creator: string }): Promise<void> {
  await es.execute(async (w) => {
    await w.sequenceOf(a.instanceId, "refresh_token", a.id);
    const row = await w.tx.refreshToken.findUnique({ where: { id: a.id } });
    if (!row || row.instanceId !== a.instanceId || row.revoked) return;
    await w.push(a.instanceId, a.creator, [
      refreshTokenRevoked.event({ aggregateId: a.id, resourceOwner: a.instanceId }),
      ...accessRevocations(a.instanceId, [{ jti: row.accessJti, exp: Math.floor(row.accessExpires.getTime() / 1000) }]),
    ]);
  });
}

/**
 * Rotates a refresh token under its lock: of two uses of one token only the first renews it. false: the
 * token presented (by its hash) is no longer the current one, or the grant was revoked.
 */
export async function renewRefreshToken(
  es: EventStore,
  a: { instanceId: string; id: string; creator: string; resourceOwner: string; presentedHash: string; rotation: RefreshRotation },
): Promise<boolean> {
  const { result } = await es.execute(async (w) => {
    await w.sequenceOf(a.instanceId, "refresh_token", a.id);
    const row = await w.tx.refreshToken.findUnique({ where: { id: a.id } });
    if (!row || row.instanceId !== a.instanceId || row.tokenHash !== a.presentedHash || row.revoked) return false;
    await w.push(a.instanceId, a.creator, [refreshTokenRenewed.event({ aggregateId: a.id, resourceOwner: a.resourceOwner }, a.rotation)]);
    return true;
  });
  return result;
}

export function registerTokenReducers(es: EventStore): void {
  es.on(accessTokenRevoked, async (tx, e) => {
    const expiresAt = new Date(e.payload.exp * 1000);
    await tx.revokedToken.upsert({ where: { jti: e.aggregateId }, create: { jti: e.aggregateId, instanceId: e.instanceId, expiresAt }, update: {} });
  });
  es.on(refreshTokenAdded, async (tx, e) => {
    const p = e.payload;
    await tx.refreshToken.create({
      data: {
        id: e.aggregateId,
        instanceId: e.instanceId,
        tokenHash: p.tokenHash,
        previousHashes: [],
        clientId: p.clientId,
        applicationId: p.applicationId,
        userId: p.userId,
        scopes: p.scopes,
        audience: p.audience,
        sessionId: p.sessionId,
        authTime: new Date(p.authTime),
        amr: p.amr,
        accessJti: p.accessJti,
        accessExpires: new Date(p.accessExpires),
        idleExpiresAt: new Date(p.idleExpiresAt),
        expiresAt: new Date(p.expiresAt),
        createdAt: e.createdAt,
      },
    });
  });
  es.on(refreshTokenRenewed, async (tx, e) => {
    const p = e.payload;
    const row = await tx.refreshToken.findUniqueOrThrow({ where: { id: e.aggregateId } });
    await tx.refreshToken.update({
      where: { id: e.aggregateId },
      data: {
        tokenHash: p.tokenHash,
        // The replaced token is remembered: using it again is reuse, and revokes the grant.
        previousHashes: [...row.previousHashes, row.tokenHash],
        accessJti: p.accessJti,
        accessExpires: new Date(p.accessExpires),
        idleExpiresAt: new Date(p.idleExpiresAt),
      },
    });
  });
  es.on(refreshTokenRevoked, async (tx, e) => {
    await tx.refreshToken.update({ where: { id: e.aggregateId }, data: { revoked: true } });
  });
}
