import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";

/** When a user last put off setting up a second factor. */
export const userMfaInitSkips = defineProjection("userMfaInitSkip", 1, (on) => {
  on(events.mfaInitSkipped, async (tx, e) => {
    const data = { instanceId: e.instanceId, orgId: e.resourceOwner, skippedAt: e.createdAt };
    await tx.userMfaInitSkip.upsert({ where: { userId: e.aggregateId }, create: { userId: e.aggregateId, ...data }, update: data });
  });
  on(events.userRemoved, async (tx, e) => {
    await tx.userMfaInitSkip.deleteMany({ where: { userId: e.aggregateId } });
  });
  on(events.orgRemoved, async (tx, e) => {
    await tx.userMfaInitSkip.deleteMany({ where: { orgId: e.aggregateId } });
  });
});
