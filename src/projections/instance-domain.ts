import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";

/** The instance's domains (a removed instance's go in cascade.ts). */
export const instanceDomains = defineProjection("instanceDomain", 1, (on) => {
  on(events.instanceDomainAdded, async (tx, e) => {
    await tx.instanceDomain.create({ data: { domain: e.payload.domain, instanceId: e.aggregateId } });
  });
  on(events.instanceDomainRemoved, async (tx, e) => {
    await tx.instanceDomain.deleteMany({ where: { domain: e.payload.domain, instanceId: e.aggregateId } });
  });
});
