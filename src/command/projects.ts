import { errors } from "../errors/errors.js";
import type { Prisma } from "../../gen/prisma/client.js";
import type { EventStore, StoredEvent, Tx } from "../eventstore/eventstore.js";
import { newId } from "../ids.js";
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
} from "./events.js";

export interface ProjectConfig {
  name: string;
  projectRoleAssertion: boolean;
  projectRoleCheck: boolean;
}

export interface RoleConfig {
  key: string;
  displayName: string;
  group: string;
}

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

export function registerProjectReducers(es: EventStore): void {
  const touch = async (tx: Tx, e: StoredEvent<object>, data: Prisma.ProjectUpdateInput = {}) => {
    await tx.project.update({ where: { id: e.aggregateId }, data: { ...data, sequence: e.sequence, changeDate: e.createdAt } });
  };
  es.on(projectAdded, async (tx, e) => {
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
  es.on(projectChanged, (tx, e) => touch(tx, e, e.payload));
  es.on(projectDeactivated, (tx, e) => touch(tx, e, { state: "inactive" }));
  es.on(projectReactivated, (tx, e) => touch(tx, e, { state: "active" }));
  es.on(projectRemoved, async (tx, e) => {
    const apps = (await tx.application.findMany({ where: { projectId: e.aggregateId }, select: { id: true } })).map((x) => x.id);
    await tx.applicationKey.deleteMany({ where: { applicationId: { in: apps } } });
    await tx.application.deleteMany({ where: { projectId: e.aggregateId } });
    await tx.projectRole.deleteMany({ where: { projectId: e.aggregateId } });
    await tx.userGrant.deleteMany({ where: { projectId: e.aggregateId } });
    const grants = await tx.projectGrant.findMany({ where: { projectId: e.aggregateId }, select: { id: true } });
    await tx.membership.deleteMany({ where: { contextType: "project_grant", contextId: { in: grants.map((g) => g.id) } } });
    await tx.projectGrant.deleteMany({ where: { projectId: e.aggregateId } });
    await tx.membership.deleteMany({ where: { contextType: "project", contextId: e.aggregateId } });
    await tx.project.delete({ where: { id: e.aggregateId } });
  });
  es.on(projectRoleAdded, async (tx, e) => {
    const { key, displayName, group } = e.payload;
    await tx.projectRole.create({ data: { projectId: e.aggregateId, key, displayName, group, createdAt: e.createdAt } });
    await touch(tx, e);
  });
  es.on(projectRoleChanged, async (tx, e) => {
    const { key, ...changes } = e.payload;
    await tx.projectRole.update({ where: { projectId_key: { projectId: e.aggregateId, key } }, data: changes });
    await touch(tx, e);
  });
  es.on(projectRoleRemoved, async (tx, e) => {
    const { key } = e.payload;
    await tx.projectRole.delete({ where: { projectId_key: { projectId: e.aggregateId, key } } });
    // The role leaves every grant that held it.
    for (const g of await tx.userGrant.findMany({ where: { projectId: e.aggregateId, roleKeys: { has: key } } })) {
      await tx.userGrant.update({ where: { id: g.id }, data: { roleKeys: g.roleKeys.filter((k) => k !== key) } });
    }
    await touch(tx, e);
  });
}
