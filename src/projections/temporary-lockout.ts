import type { Tx } from "../eventstore/eventstore.js";
import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";

const drop = async (tx: Tx, e: { aggregateId: string }) => {
  await tx.temporaryLockout.deleteMany({ where: { userId: e.aggregateId } });
};

/**
 * Temporary lockouts (the lockout settings' `lockout_duration`, as Keycloak's): a lock with an `until` is kept
 * here; any unlock or the user's removal drops it. A lock without `until` (an administrator's, or with the
 * permanent lockout) has no row and lasts until an unlock (src/command/lockouts.ts).
 */
export const temporaryLockouts = defineProjection("temporaryLockout", 1, (on) => {
  on(events.userLocked, async (tx, e) => {
    const until = e.payload.until ? new Date(e.payload.until) : undefined;
    if (until && !Number.isNaN(until.getTime())) {
      await tx.temporaryLockout.upsert({ where: { userId: e.aggregateId }, create: { userId: e.aggregateId, until }, update: { until } });
    } else {
      await drop(tx, e);
    }
  });
  on(events.userUnlocked, drop);
  on(events.userRemoved, drop);
});
