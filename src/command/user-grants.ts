import { errors } from "../errors/errors.js";
import type { EventStore, EventWriter, Tx } from "../eventstore/eventstore.js";
import { newId } from "../ids.js";
import { changeAggregate, withUniqueConflict, type ChangeDetails, type Decision } from "./aggregate.js";
import { userGrantAdded, userGrantChanged, userGrantRemoved } from "../events/index.js";

const granted = (userId: string, projectId: string) => errors.alreadyExists("GRANT-3x1s", `user "${userId}" already has a grant of project "${projectId}"`);

async function checkRoleKeys(w: EventWriter, projectId: string, keys: string[]) {
  const roles = new Set((await w.tx.projectRole.findMany({ where: { projectId }, select: { key: true } })).map((r) => r.key));
  keys.forEach((k, i) => {
    if (!roles.has(k)) throw errors.invalidArgument("GRANT-r0l3", `invalid grant.role_keys[${i}]: the project has no role "${k}"`);
  });
}

/**
 * A user of another organisation than the project's may hold only roles of an active project grant to its
 * organisation (project-grants.ts): FAILED_PRECONDITION without one, INVALID_ARGUMENT naming a key it lacks.
 */
async function checkGranted(w: EventWriter, project: { id: string; orgId: string }, userOrgId: string, keys: string[]) {
  if (userOrgId === project.orgId) return;
  const grant = await w.tx.projectGrant.findUnique({ where: { projectId_grantedOrgId: { projectId: project.id, grantedOrgId: userOrgId } } });
  if (grant?.state !== "active")
    throw errors.failedPrecondition("GRANT-pg00", `the project is not granted (or the grant is inactive) to the user's organization "${userOrgId}"`);
  keys.forEach((k, i) => {
    if (!grant.roleKeys.includes(k))
      throw errors.invalidArgument("GRANT-pg01", `invalid grant.role_keys[${i}]: the project grant to the user's organization does not include "${k}"`);
  });
}

/** A user's roles of a project; the grant belongs to the project's organisation. */
export async function createUserGrant(
  es: EventStore,
  a: { instanceId: string; userId: string; projectId: string; roleKeys: string[]; creator: string; id?: string },
): Promise<ChangeDetails> {
  // A given ID: an import keeps the IDs of the export.
  const id = a.id || newId();
  const roleKeys = [...new Set(a.roleKeys)];
  const { result } = await withUniqueConflict(
    "UserGrant",
    () => granted(a.userId, a.projectId),
    () =>
      es.execute(async (w): Promise<ChangeDetails> => {
        const project = await w.tx.project.findFirst({ where: { id: a.projectId, instanceId: a.instanceId } });
        if (!project) throw errors.notFound("GRANT-pr0j", `project "${a.projectId}" not found`);
        const user = await w.tx.user.findFirst({ where: { id: a.userId, instanceId: a.instanceId }, select: { orgId: true } });
        if (!user) throw errors.notFound("GRANT-us3r", `user "${a.userId}" not found`);
        if (await w.tx.userGrant.findUnique({ where: { userId_projectId: { userId: a.userId, projectId: a.projectId } } }))
          throw granted(a.userId, a.projectId);
        await checkRoleKeys(w, project.id, roleKeys);
        await checkGranted(w, project, user.orgId, roleKeys);
        const [e] = await w.push(a.instanceId, a.creator, [
          userGrantAdded.event({ aggregateId: id, resourceOwner: project.orgId }, { userId: a.userId, projectId: project.id, roleKeys }),
        ]);
        return { id, sequence: e!.sequence, changeDate: e!.createdAt, instanceId: a.instanceId, resourceOwner: project.orgId };
      }),
  );
  return result;
}

type GrantRow = NonNullable<Awaited<ReturnType<Tx["userGrant"]["findUnique"]>>>;

const changeGrant = (es: EventStore, a: { instanceId: string; id: string; creator: string }, decide: Decision<GrantRow, "usergrant">) =>
  changeAggregate(es, {
    aggregateType: "usergrant",
    ...a,
    load: (w) => w.tx.userGrant.findUnique({ where: { id: a.id } }),
    notFound: () => errors.notFound("GRANT-n0tf", `user grant "${a.id}" not found`),
    ownerOf: (g) => g.orgId,
    decide,
  });

export function patchUserGrant(es: EventStore, a: { instanceId: string; id: string; creator: string; roleKeys: string[] }) {
  const roleKeys = [...new Set(a.roleKeys)];
  return changeGrant(es, a, async (g, w) => {
    if (JSON.stringify(g.roleKeys) === JSON.stringify(roleKeys)) return [];
    await checkRoleKeys(w, g.projectId, roleKeys);
    const project = await w.tx.project.findUniqueOrThrow({ where: { id: g.projectId }, select: { id: true, orgId: true } });
    const user = await w.tx.user.findUniqueOrThrow({ where: { id: g.userId }, select: { orgId: true } });
    await checkGranted(w, project, user.orgId, roleKeys);
    return [userGrantChanged.change({ roleKeys })];
  });
}

export function removeUserGrant(es: EventStore, a: { instanceId: string; id: string; creator: string }) {
  return changeGrant(es, a, () => [userGrantRemoved.change()]);
}
