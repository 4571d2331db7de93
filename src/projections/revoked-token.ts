import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";

/** Access tokens revoked before they expire (by `jti`). */
export const revokedTokens = defineProjection("revokedToken", 1, (on) => {
  on(events.accessTokenRevoked, async (tx, e) => {
    const expiresAt = new Date(e.payload.exp * 1000);
    await tx.revokedToken.upsert({ where: { jti: e.aggregateId }, create: { jti: e.aggregateId, instanceId: e.instanceId, expiresAt }, update: {} });
  });
});
