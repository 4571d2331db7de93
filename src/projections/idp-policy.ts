import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";

/** The children's own state policies of identity providers (`inherit`: no row). */
export const idpPolicies = defineProjection("idpPolicy", 1, (on) => {
  on(events.idpStatePolicySet, async (tx, e) => {
    const p = e.payload;
    const key = { idpId_contextType_contextId: { idpId: e.aggregateId, contextType: p.contextType, contextId: p.contextId } };
    if (p.policy === "inherit") await tx.idpPolicy.deleteMany({ where: { idpId: e.aggregateId, contextType: p.contextType, contextId: p.contextId } });
    else {
      const data = { policy: p.policy, sequence: e.sequence, changeDate: e.createdAt };
      await tx.idpPolicy.upsert({ where: key, create: { idpId: e.aggregateId, contextType: p.contextType, contextId: p.contextId, ...data }, update: data });
    }
  });
  on(events.idpRemoved, async (tx, e) => {
    await tx.idpPolicy.deleteMany({ where: { idpId: e.aggregateId } });
  });
});
