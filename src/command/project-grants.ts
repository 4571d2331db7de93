import type { EventStore, EventWriter } from "../eventstore/eventstore.js";
import { errors } from "../errors/errors.js";
import { newId } from "../ids.js";
import { projectGrantAdded, projectGrantChanged, projectGrantDeactivated, projectGrantReactivated, projectGrantRemoved } from "../events/index.js";
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
