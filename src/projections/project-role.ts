import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";
import { projectsOfOrg } from "./related.js";

/** Projects' roles (a removed role leaves the grants that held it: project-grant.ts, user-grant.ts). */
export const projectRoles = defineProjection("projectRole", 1, (on) => {
  on(events.projectRoleAdded, async (tx, e) => {
    const { key, displayName, group } = e.payload;
    await tx.projectRole.create({ data: { projectId: e.aggregateId, key, displayName, group, createdAt: e.createdAt } });
  });
  on(events.projectRoleChanged, async (tx, e) => {
    const { key, ...changes } = e.payload;
    await tx.projectRole.update({ where: { projectId_key: { projectId: e.aggregateId, key } }, data: changes });
  });
  on(events.projectRoleRemoved, async (tx, e) => {
    await tx.projectRole.delete({ where: { projectId_key: { projectId: e.aggregateId, key: e.payload.key } } });
  });
  on(events.projectRemoved, async (tx, e) => {
    await tx.projectRole.deleteMany({ where: { projectId: e.aggregateId } });
  });
  // Reads the organisation's projects: before projects.
  on(events.orgRemoved, async (tx, e) => {
    await tx.projectRole.deleteMany({ where: { projectId: { in: await projectsOfOrg(tx, e.aggregateId) } } });
  });
});
