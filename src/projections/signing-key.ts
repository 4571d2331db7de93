import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";

/** The OIDC provider's signing keys (the private key sealed). */
export const signingKeys = defineProjection("signingKey", 1, (on) => {
  on(events.signingKeyAdded, async (tx, e) => {
    const p = e.payload;
    // A newer key ends the signing time of the older ones (their public keys stay published).
    await tx.signingKey.updateMany({ where: { instanceId: e.instanceId, useUntil: { gt: e.createdAt } }, data: { useUntil: e.createdAt } });
    await tx.signingKey.create({
      data: {
        id: p.kid,
        instanceId: e.instanceId,
        algorithm: p.algorithm,
        privateKey: p.privateKey,
        publicJwk: p.publicJwk,
        useUntil: new Date(p.useUntil),
        publishUntil: new Date(p.publishUntil),
        createdAt: e.createdAt,
      },
    });
  });
});
