import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";
import { usersOfOrg } from "./related.js";

/** Users' metadata entries (the value's bytes). */
export const userMetadata = defineProjection("userMetadata", 1, (on) => {
  on(events.userMetadataSet, async (tx, e) => {
    const value = Buffer.from(e.payload.value, "base64");
    await tx.userMetadata.upsert({
      where: { userId_key: { userId: e.aggregateId, key: e.payload.key } },
      create: { userId: e.aggregateId, key: e.payload.key, value, instanceId: e.instanceId, orgId: e.resourceOwner, changeDate: e.createdAt },
      update: { value, changeDate: e.createdAt },
    });
  });
  on(events.userMetadataRemoved, async (tx, e) => {
    await tx.userMetadata.deleteMany({ where: { userId: e.aggregateId, key: e.payload.key } });
  });
  on(events.userRemoved, async (tx, e) => {
    await tx.userMetadata.deleteMany({ where: { userId: { in: [e.aggregateId] } } });
  });
  // Reads the organisation's users: before users.
  on(events.orgRemoved, async (tx, e) => {
    await tx.userMetadata.deleteMany({ where: { userId: { in: await usersOfOrg(tx, e.aggregateId) } } });
  });
});
