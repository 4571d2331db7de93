import type { StoredEvent, Tx } from "../eventstore/eventstore.js";
import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";
import { grantsOfOrg, projectsOfOrg, usersOfOrg } from "./related.js";

/** The context's ID of a member event's aggregate: the system has none. */
const contextIdOf = (type: events.MemberContextType, aggregateId: string) => (type === "system" ? "" : aggregateId);

/**
 * Users' memberships of a context (system, instance, organisation, project, project grant) with their roles.
 * The context's own row follows the member events' sequence in its projection (instance.ts, org.ts, project.ts).
 */
export const memberships = defineProjection("membership", 1, (on) => {
  for (const [type, defs] of Object.entries(events.memberEvents) as [events.MemberContextType, (typeof events.memberEvents)[events.MemberContextType]][]) {
    const upsert = async (tx: Tx, e: StoredEvent<events.MemberRoles>) => {
      const { userId, roles } = e.payload;
      const contextId = contextIdOf(type, e.aggregateId);
      const data = { roles, sequence: e.sequence, changeDate: e.createdAt };
      await tx.membership.upsert({
        where: { userId_contextType_contextId: { userId, contextType: type, contextId } },
        create: { instanceId: e.instanceId, userId, contextType: type, contextId, ...data },
        update: data,
      });
    };
    on(defs.added, upsert);
    on(defs.changed, upsert);
    on(defs.removed, async (tx, e) => {
      await tx.membership.deleteMany({ where: { userId: e.payload.userId, contextType: type, contextId: contextIdOf(type, e.aggregateId) } });
    });
  }
  on(events.userRemoved, async (tx, e) => {
    await tx.membership.deleteMany({ where: { userId: { in: [e.aggregateId] } } });
  });
  // Every membership in the organisation or of its users, and in its projects and the grants that go with them.
  // Reads the organisation's users, projects and project grants: before users, projects and project grants.
  on(events.orgRemoved, async (tx, e) => {
    await tx.membership.deleteMany({ where: { userId: { in: await usersOfOrg(tx, e.aggregateId) } } });
    const projects = await projectsOfOrg(tx, e.aggregateId);
    const grants = await tx.projectGrant.findMany({ where: grantsOfOrg(e.aggregateId, projects), select: { id: true } });
    await tx.membership.deleteMany({ where: { contextType: "project_grant", contextId: { in: grants.map((g) => g.id) } } });
    await tx.membership.deleteMany({ where: { contextType: "project", contextId: { in: projects } } });
    await tx.membership.deleteMany({ where: { contextType: "org", contextId: e.aggregateId } });
  });
  // Reads the project's grants: before project grants.
  on(events.projectRemoved, async (tx, e) => {
    const grants = await tx.projectGrant.findMany({ where: { projectId: e.aggregateId }, select: { id: true } });
    await tx.membership.deleteMany({ where: { contextType: "project_grant", contextId: { in: grants.map((g) => g.id) } } });
    await tx.membership.deleteMany({ where: { contextType: "project", contextId: e.aggregateId } });
  });
  on(events.projectGrantRemoved, async (tx, e) => {
    await tx.membership.deleteMany({ where: { contextType: "project_grant", contextId: e.payload.grantId } });
  });
});
