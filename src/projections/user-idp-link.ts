import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";
import { usersOfOrg } from "./related.js";

/** Users' links to their accounts at identity providers. */
export const userIdpLinks = defineProjection("userIdpLink", 1, (on) => {
  on(events.idpLinkAdded, async (tx, e) => {
    await tx.userIdpLink.upsert({
      where: { userId_idpId: { userId: e.aggregateId, idpId: e.payload.idpId } },
      create: { userId: e.aggregateId, instanceId: e.instanceId, orgId: e.resourceOwner, ...e.payload, createdAt: e.createdAt },
      update: { externalUserId: e.payload.externalUserId, displayName: e.payload.displayName },
    });
  });
  on(events.idpLinkRemoved, async (tx, e) => {
    await tx.userIdpLink.deleteMany({ where: { userId: e.aggregateId, idpId: e.payload.idpId, externalUserId: e.payload.externalUserId } });
  });
  on(events.userRemoved, async (tx, e) => {
    await tx.userIdpLink.deleteMany({ where: { userId: e.aggregateId } });
  });
  // Reads the organisation's users: before users.
  on(events.orgRemoved, async (tx, e) => {
    await tx.userIdpLink.deleteMany({ where: { userId: { in: await usersOfOrg(tx, e.aggregateId) } } });
    await tx.userIdpLink.deleteMany({ where: { orgId: e.aggregateId } });
  });
  on(events.idpRemoved, async (tx, e) => {
    await tx.userIdpLink.deleteMany({ where: { idpId: e.aggregateId } });
  });
});
