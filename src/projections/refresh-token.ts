import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";

/** Refresh tokens: the current token's hash and those it replaced. */
export const refreshTokens = defineProjection("refreshToken", 1, (on) => {
  on(events.refreshTokenAdded, async (tx, e) => {
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
  on(events.refreshTokenRenewed, async (tx, e) => {
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
  on(events.refreshTokenRevoked, async (tx, e) => {
    await tx.refreshToken.update({ where: { id: e.aggregateId }, data: { revoked: true } });
  });
});
