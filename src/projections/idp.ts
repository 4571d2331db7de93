import { GITLAB } from "../domain/idps.js";
import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";

/** Identity providers (the client secret sealed). */
export const idps = defineProjection("idp", 1, (on) => {
  on(events.gitlabIdpAdded, async (tx, e) => {
    const p = e.payload;
    await tx.idp.create({
      data: {
        id: e.aggregateId,
        instanceId: e.instanceId,
        ownerType: p.ownerType,
        ownerId: p.ownerId,
        name: p.name,
        type: GITLAB,
        ownerPolicy: p.ownerPolicy,
        options: p.options,
        clientId: p.clientId,
        scopes: p.scopes,
        clientSecret: p.clientSecret ?? null,
        sequence: e.sequence,
        createdAt: e.createdAt,
        changeDate: e.createdAt,
      },
    });
  });
  on(events.gitlabIdpChanged, async (tx, e) => {
    await tx.idp.update({ where: { id: e.aggregateId }, data: { ...e.payload, sequence: e.sequence, changeDate: e.createdAt } });
  });
  // A child context's policy (idp-policy.ts) advances the provider's sequence.
  on(events.idpStatePolicySet, async (tx, e) => {
    await tx.idp.update({ where: { id: e.aggregateId }, data: { sequence: e.sequence, changeDate: e.createdAt } });
  });
  on(events.idpRemoved, async (tx, e) => {
    await tx.idp.delete({ where: { id: e.aggregateId } });
  });
});
