import { GITLAB } from "../domain/idps.js";
import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";

/** Identity providers of every kind (the secret sealed). */
export const idps = defineProjection("idp", 1, (on) => {
  on(events.idpAdded, async (tx, e) => {
    const { secret, ...p } = e.payload;
    await tx.idp.create({
      data: {
        id: e.aggregateId,
        instanceId: e.instanceId,
        ...p,
        secret: secret ?? null,
        sequence: e.sequence,
        createdAt: e.createdAt,
        changeDate: e.createdAt,
      },
    });
  });
  on(events.idpChanged, async (tx, e) => {
    await tx.idp.update({ where: { id: e.aggregateId }, data: { ...e.payload, sequence: e.sequence, changeDate: e.createdAt } });
  });
  // The first round's GitLab events: its client ID and scopes are the configuration.
  on(events.gitlabIdpAdded, async (tx, e) => {
    const { clientId, scopes, clientSecret, ...p } = e.payload;
    await tx.idp.create({
      data: {
        id: e.aggregateId,
        instanceId: e.instanceId,
        ...p,
        type: GITLAB,
        config: { clientId, scopes },
        secret: clientSecret ?? null,
        sequence: e.sequence,
        createdAt: e.createdAt,
        changeDate: e.createdAt,
      },
    });
  });
  on(events.gitlabIdpChanged, async (tx, e) => {
    const { clientId, scopes, clientSecret, ...p } = e.payload;
    const before = await tx.idp.findUniqueOrThrow({ where: { id: e.aggregateId }, select: { config: true } });
    const config = { ...(before.config as object), ...(clientId !== undefined ? { clientId } : {}), ...(scopes !== undefined ? { scopes } : {}) };
    await tx.idp.update({
      where: { id: e.aggregateId },
      data: { ...p, config, ...(clientSecret !== undefined ? { secret: clientSecret } : {}), sequence: e.sequence, changeDate: e.createdAt },
    });
  });
  // A child context's policy (idp-policy.ts) advances the provider's sequence.
  on(events.idpStatePolicySet, async (tx, e) => {
    await tx.idp.update({ where: { id: e.aggregateId }, data: { sequence: e.sequence, changeDate: e.createdAt } });
  });
  on(events.idpRemoved, async (tx, e) => {
    await tx.idp.delete({ where: { id: e.aggregateId } });
  });
});
