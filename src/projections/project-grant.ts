import type { Tx } from "../eventstore/eventstore.js";
import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";
import { grantsOfOrg, projectsOfOrg } from "./related.js";

const touch = async (tx: Tx, id: string, data: object, e: { sequence: number; createdAt: Date }) => {
  await tx.projectGrant.update({ where: { id }, data: { ...data, sequence: e.sequence, changeDate: e.createdAt } });
};

/** Projects granted to other organisations, with some of their roles (the events are the project's). */
export const projectGrants = defineProjection("projectGrant", 1, (on) => {
  on(events.projectGrantAdded, async (tx, e) => {
    const p = e.payload;
    await tx.projectGrant.create({
      data: {
        id: p.grantId,
        instanceId: e.instanceId,
        projectId: e.aggregateId,
        orgId: e.resourceOwner,
        grantedOrgId: p.grantedOrgId,
        roleKeys: p.roleKeys,
        state: "active",
        sequence: e.sequence,
        createdAt: e.createdAt,
        changeDate: e.createdAt,
      },
    });
  });
  // Its user grants lose the keys left out (user-grant.ts).
  on(events.projectGrantChanged, (tx, e) => touch(tx, e.payload.grantId, { roleKeys: e.payload.roleKeys }, e));
  on(events.projectGrantDeactivated, (tx, e) => touch(tx, e.payload.grantId, { state: "inactive" }, e));
  on(events.projectGrantReactivated, (tx, e) => touch(tx, e.payload.grantId, { state: "active" }, e));
  on(events.projectGrantRemoved, async (tx, e) => {
    await tx.projectGrant.delete({ where: { id: e.payload.grantId } });
  });
  // A role removed from the project leaves its grants too (its user grants: user-grant.ts).
  on(events.projectRoleRemoved, async (tx, e) => {
    for (const g of await tx.projectGrant.findMany({ where: { projectId: e.aggregateId, roleKeys: { has: e.payload.key } } })) {
      await tx.projectGrant.update({ where: { id: g.id }, data: { roleKeys: g.roleKeys.filter((k) => k !== e.payload.key) } });
    }
  });
  on(events.projectRemoved, async (tx, e) => {
    await tx.projectGrant.deleteMany({ where: { projectId: e.aggregateId } });
  });
  // Grants of the organisation's projects, and to it. Reads the organisation's projects: before projects.
  on(events.orgRemoved, async (tx, e) => {
    await tx.projectGrant.deleteMany({ where: grantsOfOrg(e.aggregateId, await projectsOfOrg(tx, e.aggregateId)) });
  });
});
