import { errors } from "../errors/errors.js";
import type { EventStore, EventWriter, Tx } from "../eventstore/eventstore.js";
import { newId } from "../ids.js";
import { changeAggregate, changedFields, withUniqueConflict, type Change, type ChangeDetails } from "./aggregate.js";
import { EventTypes } from "./events.js";

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

export async function createProject(es: EventStore, a: { instanceId: string; orgId: string; creator: string; config: ProjectConfig }): Promise<ChangeDetails> {
  const id = newId();
  const { result } = await withUniqueConflict("Project", () => nameTaken(a.config.name), () =>
    es.execute(async (w): Promise<ChangeDetails> => {
      await checkNameFree(w.tx, a.orgId, a.config.name);
      const [e] = await w.push(a.instanceId, a.creator, [
        { aggregateType: "project", aggregateId: id, type: EventTypes.projectAdded, payload: { ...a.config }, resourceOwner: a.orgId },
      ]);
      return { id, sequence: e!.sequence, changeDate: e!.createdAt, instanceId: a.instanceId, resourceOwner: a.orgId };
    }),
  );
  return result;
}

/** Every change to an existing project and its roles. */
export function changeProject(
  es: EventStore,
  a: { instanceId: string; id: string; creator: string },
  decide: (p: ProjectRow, w: EventWriter) => Change[] | Promise<Change[]>,
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
  return withUniqueConflict("Project", () => nameTaken(a.changes.name ?? ""), () =>
    changeProject(es, a, async (p, w) => {
      const changed = changedFields(p as unknown as Record<string, unknown>, a.changes);
      if (!Object.keys(changed).length) return [];
      if (typeof changed.name === "string") await checkNameFree(w.tx, p.orgId, changed.name, p.id);
      return [{ type: EventTypes.projectChanged, payload: changed }];
    }),
  );
}

export function setProjectState(es: EventStore, a: { instanceId: string; id: string; creator: string; active: boolean }) {
  return changeProject(es, a, (p) => {
    if ((p.state === "active") === a.active) return [];
    return [{ type: a.active ? EventTypes.projectReactivated : EventTypes.projectDeactivated }];
  });
}

export function removeProject(es: EventStore, a: { instanceId: string; id: string; creator: string }) {
  return changeProject(es, a, () => [{ type: EventTypes.projectRemoved }]);
}

export function addRole(es: EventStore, a: { instanceId: string; id: string; creator: string; role: RoleConfig }) {
  return changeProject(es, a, async (p, w) => {
    const exists = await w.tx.projectRole.findUnique({ where: { projectId_key: { projectId: p.id, key: a.role.key } } });
    if (exists) throw errors.alreadyExists("PROJ-r0l3", `the project already has a role "${a.role.key}"`);
    return [{ type: EventTypes.projectRoleAdded, payload: { ...a.role } }];
  });
}

export function patchRole(es: EventStore, a: { instanceId: string; id: string; creator: string; key: string; changes: Partial<Omit<RoleConfig, "key">> }) {
  return changeProject(es, a, async (p, w) => {
    const role = await w.tx.projectRole.findUnique({ where: { projectId_key: { projectId: p.id, key: a.key } } });
    if (!role) throw errors.notFound("PROJ-r0l4", `role "${a.key}" of project "${p.id}" not found`);
    const changed = changedFields(role as unknown as Record<string, unknown>, a.changes);
    return Object.keys(changed).length ? [{ type: EventTypes.projectRoleChanged, payload: { key: a.key, ...changed } }] : [];
  });
}

export function removeRole(es: EventStore, a: { instanceId: string; id: string; creator: string; key: string }) {
  return changeProject(es, a, async (p, w) => {
    const role = await w.tx.projectRole.findUnique({ where: { projectId_key: { projectId: p.id, key: a.key } } });
    if (!role) throw errors.notFound("PROJ-r0l5", `role "${a.key}" of project "${p.id}" not found`);
    return [{ type: EventTypes.projectRoleRemoved, payload: { key: a.key } }];
  });
}

export function registerProjectReducers(es: EventStore): void {
  const touch = async (tx: Tx, id: string, sequence: number, changeDate: Date, data: Record<string, unknown> = {}) => {
    await tx.project.update({ where: { id }, data: { ...data, sequence, changeDate } });
  };
  es.on(EventTypes.projectAdded, async (tx, e) => {
    const p = e.payload as unknown as ProjectConfig;
    await tx.project.create({
      data: {
        id: e.aggregateId,
        instanceId: e.instanceId,
        orgId: e.resourceOwner,
        name: p.name,
        state: "active",
        projectRoleAssertion: !!p.projectRoleAssertion,
        projectRoleCheck: !!p.projectRoleCheck,
        sequence: e.sequence,
        createdAt: e.createdAt,
        changeDate: e.createdAt,
      },
    });
  });
  es.on(EventTypes.projectChanged, (tx, e) => touch(tx, e.aggregateId, e.sequence, e.createdAt, e.payload));
  es.on(EventTypes.projectDeactivated, (tx, e) => touch(tx, e.aggregateId, e.sequence, e.createdAt, { state: "inactive" }));
  es.on(EventTypes.projectReactivated, (tx, e) => touch(tx, e.aggregateId, e.sequence, e.createdAt, { state: "active" }));
  es.on(EventTypes.projectRemoved, async (tx, e) => {
    const apps = (await tx.application.findMany({ where: { projectId: e.aggregateId }, select: { id: true } })).map((x) => x.id);
    await tx.applicationKey.deleteMany({ where: { applicationId: { in: apps } } });
    await tx.application.deleteMany({ where: { projectId: e.aggregateId } });
    await tx.projectRole.deleteMany({ where: { projectId: e.aggregateId } });
    await tx.userGrant.deleteMany({ where: { projectId: e.aggregateId } });
    await tx.membership.deleteMany({ where: { contextType: "project", contextId: e.aggregateId } });
    await tx.project.delete({ where: { id: e.aggregateId } });
  });
  es.on(EventTypes.projectRoleAdded, async (tx, e) => {
    const r = e.payload as unknown as RoleConfig;
    await tx.projectRole.create({ data: { projectId: e.aggregateId, key: r.key, displayName: r.displayName ?? "", group: r.group ?? "", createdAt: e.createdAt } });
    await touch(tx, e.aggregateId, e.sequence, e.createdAt);
  });
  es.on(EventTypes.projectRoleChanged, async (tx, e) => {
    const { key, ...changes } = e.payload as unknown as RoleConfig;
    await tx.projectRole.update({ where: { projectId_key: { projectId: e.aggregateId, key } }, data: changes });
    await touch(tx, e.aggregateId, e.sequence, e.createdAt);
  });
  es.on(EventTypes.projectRoleRemoved, async (tx, e) => {
    const key = String(e.payload.key);
    await tx.projectRole.delete({ where: { projectId_key: { projectId: e.aggregateId, key } } });
    // The role leaves every grant that held it.
    for (const g of await tx.userGrant.findMany({ where: { projectId: e.aggregateId, roleKeys: { has: key } } })) {
      await tx.userGrant.update({ where: { id: g.id }, data: { roleKeys: g.roleKeys.filter((k) => k !== key) } });
    }
    await touch(tx, e.aggregateId, e.sequence, e.createdAt);
  });
}
