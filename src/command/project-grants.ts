import type { Tx } from "../eventstore/eventstore.js";
import type { EventStore, EventWriter } from "../eventstore/eventstore.js";
import { errors } from "../errors/errors.js";
import { newId } from "../ids.js";
import { projectGrantAdded, projectGrantChanged, projectGrantDeactivated, projectGrantReactivated, projectGrantRemoved, projectRoleRemoved } from "./events.js";
import { changeProject } from "./projects.js";

/**
 * Project grants: an organisation grants one of its projects to another organisation with some of its roles
 * (ZITADEL's ProjectGrant). The events are the project's, so a grant and the roles it names change in one
 * order. The granted organisation's users may then hold those roles on the project (user-grants.ts).
 */
type Who = { instanceId: string; projectId: string; creator: string };

function checkKeys(roles: Set<string>, keys: string[]) {
  keys.forEach((k, i) => {
    if (!roles.has(k)) throw errors.invalidArgument("PGRT-r0l3", `invalid grant.role_keys[${i}]: the project has no role "${k}"`);
  });
}

async function rolesOf(w: EventWriter, projectId: string) {
  return new Set((await w.tx.projectRole.findMany({ where: { projectId }, select: { key: true } })).map((r) => r.key));
}

async function grantOf(w: EventWriter, projectId: string, grantId: string) {
  const g = await w.tx.projectGrant.findFirst({ where: { id: grantId, projectId } });
  if (!g) throw errors.notFound("PGRT-n0tf", `grant "${grantId}" of project "${projectId}" not found`);
  return g;
}

/** `id`: an import keeps the grant's ID. */
export async function createProjectGrant(es: EventStore, a: Who & { grantedOrgId: string; roleKeys: string[]; id?: string }) {
  const grantId = a.id || newId();
  const roleKeys = [...new Set(a.roleKeys)];
  const details = await changeProject(es, { instanceId: a.instanceId, id: a.projectId, creator: a.creator }, async (p, w) => {
    if (a.grantedOrgId === p.orgId)
      throw errors.invalidArgument("PGRT-0wn0", "invalid grant.granted_organization_id: the project's own organisation needs no grant");
    if (!(await w.tx.org.findFirst({ where: { id: a.grantedOrgId, instanceId: a.instanceId }, select: { id: true } })))
      throw errors.notFound("PGRT-0rg0", `grant.granted_organization_id: organization "${a.grantedOrgId}" not found`);
    if (await w.tx.projectGrant.findUnique({ where: { projectId_grantedOrgId: { projectId: p.id, grantedOrgId: a.grantedOrgId } } }))
      throw errors.alreadyExists("PGRT-3x1s", `the project is granted to organization "${a.grantedOrgId}" already`);
    checkKeys(await rolesOf(w, p.id), roleKeys);
    return [projectGrantAdded.change({ grantId, grantedOrgId: a.grantedOrgId, roleKeys })];
  });
  return { ...details, id: grantId };
}

export function patchProjectGrant(es: EventStore, a: Who & { grantId: string; roleKeys: string[] }) {
  const roleKeys = [...new Set(a.roleKeys)];
  return changeProject(es, { instanceId: a.instanceId, id: a.projectId, creator: a.creator }, async (p, w) => {
    const g = await grantOf(w, p.id, a.grantId);
    checkKeys(await rolesOf(w, p.id), roleKeys);
    return g.roleKeys.join() === roleKeys.join() ? [] : [projectGrantChanged.change({ grantId: g.id, roleKeys })];
  });
}

export function setProjectGrantState(es: EventStore, a: Who & { grantId: string; active: boolean }) {
  return changeProject(es, { instanceId: a.instanceId, id: a.projectId, creator: a.creator }, async (p, w) => {
    const g = await grantOf(w, p.id, a.grantId);
    if ((g.state === "active") === a.active) return [];
    return [(a.active ? projectGrantReactivated : projectGrantDeactivated).change({ grantId: g.id })];
  });
}

export function removeProjectGrant(es: EventStore, a: Who & { grantId: string }) {
  return changeProject(es, { instanceId: a.instanceId, id: a.projectId, creator: a.creator }, async (p, w) => {
    const g = await grantOf(w, p.id, a.grantId);
    return [projectGrantRemoved.change({ grantId: g.id })];
  });
}

/** The user grants on `projectId` of the users of `orgId`, keeping only `keep` keys (all: none kept). */
async function trimUserGrants(tx: Tx, projectId: string, orgId: string, keep: (key: string) => boolean) {
  const users = (await tx.user.findMany({ where: { orgId }, select: { id: true } })).map((u) => u.id);
  for (const g of await tx.userGrant.findMany({ where: { projectId, userId: { in: users } } })) {
    const roleKeys = g.roleKeys.filter(keep);
    if (roleKeys.length !== g.roleKeys.length) await tx.userGrant.update({ where: { id: g.id }, data: { roleKeys } });
  }
}

export function registerProjectGrantReducers(es: EventStore): void {
  const touch = (tx: Tx, id: string, data: object, e: { sequence: number; createdAt: Date }) =>
    tx.projectGrant.update({ where: { id }, data: { ...data, sequence: e.sequence, changeDate: e.createdAt } });
  es.on(projectGrantAdded, async (tx, e) => {
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
  es.on(projectGrantChanged, async (tx, e) => {
    const g = await touch(tx, e.payload.grantId, { roleKeys: e.payload.roleKeys }, e);
    await trimUserGrants(tx, g.projectId, g.grantedOrgId, (k) => e.payload.roleKeys.includes(k));
  });
  es.on(projectGrantDeactivated, (tx, e) => touch(tx, e.payload.grantId, { state: "inactive" }, e).then(() => {}));
  es.on(projectGrantReactivated, (tx, e) => touch(tx, e.payload.grantId, { state: "active" }, e).then(() => {}));
  es.on(projectGrantRemoved, async (tx, e) => {
    const g = await tx.projectGrant.delete({ where: { id: e.payload.grantId } });
    await tx.membership.deleteMany({ where: { contextType: "project_grant", contextId: g.id } });
    const users = (await tx.user.findMany({ where: { orgId: g.grantedOrgId }, select: { id: true } })).map((u) => u.id);
    await tx.userGrant.deleteMany({ where: { projectId: g.projectId, userId: { in: users } } });
  });
  // A role removed from the project leaves its grants too (its user grants: projects.ts).
  es.on(projectRoleRemoved, async (tx, e) => {
    for (const g of await tx.projectGrant.findMany({ where: { projectId: e.aggregateId, roleKeys: { has: e.payload.key } } })) {
      await tx.projectGrant.update({ where: { id: g.id }, data: { roleKeys: g.roleKeys.filter((k) => k !== e.payload.key) } });
    }
  });
}
