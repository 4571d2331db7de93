import * as events from "../events/index.js";
import { credentialRow, defineProjection } from "./projection.js";
import { usersOfOrg } from "./related.js";

/** Machine users' key pairs: only the public key is stored. */
export const machineKeys = defineProjection("machineKey", 1, (on) => {
  on(events.keyAdded, async (tx, e) => {
    await tx.machineKey.create({ data: { ...credentialRow(e, e.payload.keyId), userId: e.aggregateId, publicKey: e.payload.publicKey } });
  });
  on(events.keyRemoved, async (tx, e) => {
    await tx.machineKey.deleteMany({ where: { id: e.payload.keyId, userId: e.aggregateId } });
  });
  on(events.userRemoved, async (tx, e) => {
    await tx.machineKey.deleteMany({ where: { userId: { in: [e.aggregateId] } } });
  });
  // Reads the organisation's users: before users.
  on(events.orgRemoved, async (tx, e) => {
    await tx.machineKey.deleteMany({ where: { userId: { in: await usersOfOrg(tx, e.aggregateId) } } });
  });
});
