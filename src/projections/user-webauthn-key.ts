import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";
import { usersOfOrg } from "./related.js";

/**
 * Users' WebAuthn credentials. A leftover would outlive its user: its credential ID, unique in the instance,
 * could never be registered again.
 */
export const userWebauthnKeys = defineProjection("userWebauthnKey", 1, (on) => {
  on(events.webauthnKeyAdded, async (tx, e) => {
    const p = e.payload;
    await tx.userWebauthnKey.create({
      data: {
        id: p.keyId,
        userId: e.aggregateId,
        instanceId: e.instanceId,
        orgId: e.resourceOwner,
        credentialId: p.credentialId,
        publicKey: p.publicKey,
        counter: BigInt(p.counter),
        transports: p.transports,
        name: p.name,
        passwordless: p.passwordless,
        sequence: e.sequence,
        createdAt: e.createdAt,
        changeDate: e.createdAt,
      },
    });
  });
  on(events.webauthnKeyUsed, async (tx, e) => {
    await tx.userWebauthnKey.updateMany({
      where: { id: e.payload.keyId },
      data: { counter: BigInt(e.payload.counter), sequence: e.sequence, changeDate: e.createdAt },
    });
  });
  on(events.webauthnKeyRemoved, async (tx, e) => {
    await tx.userWebauthnKey.deleteMany({ where: { id: e.payload.keyId } });
  });
  on(events.userRemoved, async (tx, e) => {
    await tx.userWebauthnKey.deleteMany({ where: { userId: e.aggregateId } });
  });
  // Reads the organisation's users: before users.
  on(events.orgRemoved, async (tx, e) => {
    await tx.userWebauthnKey.deleteMany({ where: { userId: { in: await usersOfOrg(tx, e.aggregateId) } } });
    await tx.userWebauthnKey.deleteMany({ where: { orgId: e.aggregateId } });
  });
});
