import type { Prisma } from "../../gen/prisma/client.js";
import type { StoredEvent, Tx } from "../eventstore/eventstore.js";
import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";
import { projectsOfOrg } from "./related.js";

/** The row follows its aggregate's sequence, which every event of it advances (its roles' and members' too). */
const touch = async (tx: Tx, e: StoredEvent<object>, data: Prisma.ProjectUpdateInput = {}) => {
  await tx.project.update({ where: { id: e.aggregateId }, data: { ...data, sequence: e.sequence, changeDate: e.createdAt } });
};

export const projects = defineProjection("project", 1, (on) => {
  on(events.projectAdded, async (tx, e) => {
    const p = e.payload;
    await tx.project.create({
      data: {
        id: e.aggregateId,
        instanceId: e.instanceId,
        orgId: e.resourceOwner,
        name: p.name,
        state: "active",
        projectRoleAssertion: p.projectRoleAssertion,
        projectRoleCheck: p.projectRoleCheck,
        sequence: e.sequence,
        createdAt: e.createdAt,
        changeDate: e.createdAt,
      },
    });
  });
  on(events.projectChanged, (tx, e) => touch(tx, e, e.payload));
  on(events.projectDeactivated, (tx, e) => touch(tx, e, { state: "inactive" }));
  on(events.projectReactivated, (tx, e) => touch(tx, e, { state: "active" }));
  // Its applications, roles, grants, user grants and memberships go with it, each in its own projection.
  on(events.projectRemoved, async (tx, e) => {
    await tx.project.delete({ where: { id: e.aggregateId } });
  });
  on(events.projectRoleAdded, (tx, e) => touch(tx, e));
  on(events.projectRoleChanged, (tx, e) => touch(tx, e));
  on(events.projectRoleRemoved, (tx, e) => touch(tx, e));
  on(events.memberEvents.project.added, (tx, e) => touch(tx, e));
  on(events.memberEvents.project.changed, (tx, e) => touch(tx, e));
  on(events.memberEvents.project.removed, (tx, e) => touch(tx, e));
  // Projects go with their organisation.
  on(events.orgRemoved, async (tx, e) => {
    await tx.project.deleteMany({ where: { id: { in: await projectsOfOrg(tx, e.aggregateId) } } });
  });
});
