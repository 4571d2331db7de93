import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";
import { usersOfOrg } from "./related.js";

/** Users' TOTP authenticators (the secret sealed). */
export const userTotps = defineProjection("userTotp", 1, (on) => {
  on(events.totpAdded, async (tx, e) => {
    const data = {
      instanceId: e.instanceId,
      orgId: e.resourceOwner,
      secret: e.payload.secret,
      verified: false,
      sequence: e.sequence,
      createdAt: e.createdAt,
      changeDate: e.createdAt,
    };
    await tx.userTotp.upsert({ where: { userId: e.aggregateId }, create: { userId: e.aggregateId, ...data }, update: data });
  });
  on(events.totpVerified, async (tx, e) => {
    await tx.userTotp.update({ where: { userId: e.aggregateId }, data: { verified: true, sequence: e.sequence, changeDate: e.createdAt } });
  });
  on(events.totpRemoved, async (tx, e) => {
    await tx.userTotp.deleteMany({ where: { userId: e.aggregateId } });
  });
  on(events.userRemoved, async (tx, e) => {
    await tx.userTotp.deleteMany({ where: { userId: e.aggregateId } });
  });
  // The organisation's users go with it, and so do their authenticators. Reads the organisation's users: before users.
  on(events.orgRemoved, async (tx, e) => {
    await tx.userTotp.deleteMany({ where: { userId: { in: await usersOfOrg(tx, e.aggregateId) } } });
    await tx.userTotp.deleteMany({ where: { orgId: e.aggregateId } });
  });
});
