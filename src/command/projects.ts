import { errors } from "../errors/errors.js";
import type { EventStore, Tx } from "../eventstore/eventstore.js";
import { newId } from "../ids.js";
import type { ProjectConfig, RoleConfig } from "../domain/projects.js";
import { changeAggregate, changedFields, withUniqueConflict, type ChangeDetails, type Decision } from "./aggregate.js";
import {
  projectAdded,
  projectChanged,
  projectDeactivated,
  projectReactivated,
  projectRemoved,
  projectRoleAdded,
  projectRoleChanged,
  projectRoleRemoved,
} from "../events/index.js";

export type { ProjectConfig, RoleConfig } from "../domain/projects.js";

type ProjectRow = NonNullable<Awaited<ReturnType<Tx["project"]["findUnique"]>>>;

const nameTaken = (name: string) => errors.alreadyExists("PROJ-n4me", `a project named "${name}" already exists in this organization`);

async function checkNameFree(tx: Tx, orgId: string, name: string, except?: string) {
  const other = await tx.project.findFirst({ where: { orgId, name, ...(except ? { NOT: { id: except } } : {}) }, select: { id: true } });
  if (other) throw nameTaken(name);
}

export async function createProject(
  es: EventStore,
  a: { instanceId: string; orgId: string; creator: string; config: ProjectConfig; id?: string },
): Promise<ChangeDetails> {
  // A given ID: an import keeps the IDs of the export.
  const id = a.id || newId();
  const { result } = await withUniqueConflict(
    "Project",
    () => nameTaken(a.config.name),
    () =>
      es.execute(async (w): Promise<ChangeDetails> => {
        await checkNameFree(w.tx, a.orgId, a.config.name);
        const [e] = await w.push(a.instanceId, a.creator, [projectAdded.event({ aggregateId: id, resourceOwner: a.orgId }, { ...a.config })]);
        return { id, sequence: e!.sequence, changeDate: e!.createdAt, instanceId: a.instanceId, resourceOwner: a.orgId };
      }),
  );
  return result;
}

/** Every change to an existing project and its roles. */
export function changeProject(
  es: EventStore,
  a: { instanceId: string; id: string; creator: string },
  decide: Decision<ProjectRow, "project">,
): Promise<ChangeDetails> {
  return changeAggregate(es, {
    aggregateType: "project",
    ...a,
    load: (w) => w.tx.project.findUnique({ where: { id: a.id } }),
    notFound: () => errors.notFound("PROJ-n0tf", `project "${a.id}" not found`),
    ownerOf: (p) => p.orgId,
    decide,
  });
}

export function patchProject(es: EventStore, a: { instanceId: string; id: string; creator: string; changes: Partial<ProjectConfig> }) {
  return withUniqueConflict(
    "Project",
    () => nameTaken(a.changes.name ?? ""),
    () =>
      changeProject(es, a, async (p, w) => {
        const changed = changedFields(p, a.changes);
        if (!Object.keys(changed).length) return [];
        if (changed.name !== undefined) await checkNameFree(w.tx, p.orgId, changed.name, p.id);
        return [projectChanged.change(changed)];
      }),
  );
}

export function setProjectState(es: EventStore, a: { instanceId: string; id: string; creator: string; active: boolean }) {
  return changeProject(es, a, (p) => {
    if ((p.state === "active") === a.active) return [];
    return [(a.active ? projectReactivated : projectDeactivated).change()];
  });
}

export function removeProject(es: EventStore, a: { instanceId: string; id: string; creator: string }) {
  return changeProject(es, a, () => [projectRemoved.change()]);
}

export function addRole(es: EventStore, a: { instanceId: string; id: string; creator: string; role: RoleConfig }) {
  return changeProject(es, a, async (p, w) => {
    const exists = await w.tx.projectRole.findUnique({ where: { projectId_key: { projectId: p.id, key: a.role.key } } });
    if (exists) throw errors.alreadyExists("PROJ-r0l3", `the project already has a role "${a.role.key}"`);
    return [projectRoleAdded.change({ ...a.role })];
  });
}

export function patchRole(es: EventStore, a: { instanceId: string; id: string; creator: string; key: string; changes: Partial<Omit<RoleConfig, "key">> }) {
  return changeProject(es, a, async (p, w) => {
    const role = await w.tx.projectRole.findUnique({ where: { projectId_key: { projectId: p.id, key: a.key } } });
    if (!role) throw errors.notFound("PROJ-r0l4", `role "${a.key}" of project "${p.id}" not found`);
    const changed = changedFields(role, a.changes);
    return Object.keys(changed).length ? [projectRoleChanged.change({ key: a.key, ...changed })] : [];
  });
}

export function removeRole(es: EventStore, a: { instanceId: string; id: string; creator: string; key: string }) {
  return changeProject(es, a, async (p, w) => {
    const role = await w.tx.projectRole.findUnique({ where: { projectId_key: { projectId: p.id, key: a.key } } });
    if (!role) throw errors.notFound("PROJ-r0l5", `role "${a.key}" of project "${p.id}" not found`);
    return [projectRoleRemoved.change({ key: a.key })];
  });
}
