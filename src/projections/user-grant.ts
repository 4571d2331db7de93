import type { Tx } from "../eventstore/eventstore.js";
import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";
import { usersOfOrg } from "./related.js";

/** The user grants on `projectId` of the users of `orgId`, keeping only `keep` keys (all: none kept). */
async function trimUserGrants(tx: Tx, projectId: string, orgId: string, keep: (key: string) => boolean) {
  const users = await usersOfOrg(tx, orgId);
  for (const g of await tx.userGrant.findMany({ where: { projectId, userId: { in: users } } })) {
    const roleKeys = g.roleKeys.filter(keep);
    if (roleKeys.length !== g.roleKeys.length) await tx.userGrant.update({ where: { id: g.id }, data: { roleKeys } });
  }
}

/** The project a project grant is of and the organisation it grants to (none: the grant's own handler fails). */
const grantOf = (tx: Tx, grantId: string) => tx.projectGrant.findUnique({ where: { id: grantId }, select: { projectId: true, grantedOrgId: true } });

/** Users' grants of a project's roles. */
export const userGrants = defineProjection("userGrant", 1, (on) => {
  on(events.userGrantAdded, async (tx, e) => {
    const user = await tx.user.findUnique({ where: { id: e.payload.userId }, select: { orgId: true } });
    await tx.userGrant.create({
      data: {
        id: e.aggregateId,
        instanceId: e.instanceId,
        orgId: e.resourceOwner,
        userOrgId: user?.orgId ?? "",
        ...e.payload,
        sequence: e.sequence,
        createdAt: e.createdAt,
        changeDate: e.createdAt,
      },
    });
  });
  on(events.userGrantChanged, async (tx, e) => {
    await tx.userGrant.update({ where: { id: e.aggregateId }, data: { roleKeys: e.payload.roleKeys, sequence: e.sequence, changeDate: e.createdAt } });
  });
  on(events.userGrantRemoved, async (tx, e) => {
    await tx.userGrant.deleteMany({ where: { id: e.aggregateId } });
  });
  on(events.userRemoved, async (tx, e) => {
    await tx.userGrant.deleteMany({ where: { userId: { in: [e.aggregateId] } } });
  });
  on(events.projectRemoved, async (tx, e) => {
    await tx.userGrant.deleteMany({ where: { projectId: e.aggregateId } });
  });
  // The role leaves every grant that held it.
  on(events.projectRoleRemoved, async (tx, e) => {
    const { key } = e.payload;
    for (const g of await tx.userGrant.findMany({ where: { projectId: e.aggregateId, roleKeys: { has: key } } })) {
      await tx.userGrant.update({ where: { id: g.id }, data: { roleKeys: g.roleKeys.filter((k) => k !== key) } });
    }
  });
  // Keys left out of a project grant leave the granted organisation's user grants on the project.
  on(events.projectGrantChanged, async (tx, e) => {
    const g = await grantOf(tx, e.payload.grantId);
    if (g) await trimUserGrants(tx, g.projectId, g.grantedOrgId, (k) => e.payload.roleKeys.includes(k));
  });
  // The granted organisation's user grants on the project go with the grant. Reads the grant: before project grants.
  on(events.projectGrantRemoved, async (tx, e) => {
    const g = await grantOf(tx, e.payload.grantId);
    if (!g) return;
    const users = await usersOfOrg(tx, g.grantedOrgId);
    await tx.userGrant.deleteMany({ where: { projectId: g.projectId, userId: { in: users } } });
  });
  // Grants of the organisation's users, and those it owns. Reads the organisation's users: before users.
  on(events.orgRemoved, async (tx, e) => {
    await tx.userGrant.deleteMany({ where: { userId: { in: await usersOfOrg(tx, e.aggregateId) } } });
    await tx.userGrant.deleteMany({ where: { orgId: e.aggregateId } });
  });
});
