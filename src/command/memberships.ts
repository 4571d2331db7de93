import { availableRoles } from "../domain/roles.js";
import { errors } from "../errors/errors.js";
import type { EventStore, Tx } from "../eventstore/eventstore.js";
import type { ChangeDetails } from "./aggregate.js";
import { memberEvents, type MemberContextType } from "../events/index.js";

export type { MemberContextType };

/** A membership's ID: derived from what makes it unique, the context and the user. */
export const membershipId = (type: MemberContextType, contextId: string, userId: string) => `${type}:${contextId}:${userId}`;

export function parseMembershipId(id: string): { type: MemberContextType; contextId: string; userId: string } | undefined {
  const m = /^(instance|org|project|project_grant):([^:]+):([^:]+)$/.exec(id);
  return m ? { type: m[1] as MemberContextType, contextId: m[2]!, userId: m[3]! } : undefined;
}

function checkRoles(type: MemberContextType, roles: string[]) {
  const allowed = availableRoles(type);
  if (!roles.length) throw errors.invalidArgument("MEMB-r0l0", "invalid membership.roles: at least one role is required");
  roles.forEach((r, i) => {
    if (!allowed.includes(r)) throw errors.invalidArgument("MEMB-r0l1", `invalid membership.roles[${i}]: "${r}" is not a ${type} role (${allowed.join(", ")})`);
  });
}

interface Target {
  instanceId: string;
  type: MemberContextType;
  contextId: string;
  userId: string;
  creator: string;
}

/** The organisation or instance a membership's events belong to: the context's owner. */
async function ownerOf(tx: Tx, t: Target): Promise<string> {
  if (t.type === "instance") return t.instanceId;
  if (t.type === "project_grant") {
    // A grant's members belong to the project's organisation, which made the grant.
    const grant = await tx.projectGrant.findFirst({ where: { id: t.contextId, instanceId: t.instanceId } });
    if (!grant) throw errors.notFound("MEMB-gr4n", `project grant "${t.contextId}" not found`);
    return grant.orgId;
  }
  if (t.type === "org") {
    const org = await tx.org.findFirst({ where: { id: t.contextId, instanceId: t.instanceId } });
    if (!org) throw errors.notFound("MEMB-0rg0", `organization "${t.contextId}" not found`);
    return org.id;
  }
  const project = await tx.project.findFirst({ where: { id: t.contextId, instanceId: t.instanceId } });
  if (!project) throw errors.notFound("MEMB-pr0c", `project "${t.contextId}" not found`);
  return project.orgId;
}

/** Adds (roles given, none yet), changes (roles given) or removes (roles undefined) a membership. */
async function writeMembership(es: EventStore, t: Target, roles: string[] | undefined, mode: "add" | "change" | "remove"): Promise<ChangeDetails> {
  if (roles) checkRoles(t.type, [...new Set(roles)]);
  const id = membershipId(t.type, t.contextId, t.userId);
  const { result } = await es.execute(async (w): Promise<ChangeDetails> => {
    const aggregateId = t.contextId;
    await w.lock(t.instanceId, t.type, aggregateId);
    const resourceOwner = await ownerOf(w.tx, t);
    const user = await w.tx.user.findFirst({ where: { id: t.userId, instanceId: t.instanceId } });
    if (!user) throw errors.notFound("MEMB-us3r", `user "${t.userId}" not found`);
    // A grant's members act for the granted organisation: they are its users.
    if (mode === "add" && t.type === "project_grant") {
      const grant = await w.tx.projectGrant.findUniqueOrThrow({ where: { id: t.contextId } });
      if (user.orgId !== grant.grantedOrgId)
        throw errors.invalidArgument(
          "MEMB-gr0g",
          `invalid membership.user_id: a project grant's members are users of the granted organization "${grant.grantedOrgId}"`,
        );
    }
    const key = { userId_contextType_contextId: { userId: t.userId, contextType: t.type, contextId: t.contextId } };
    const existing = await w.tx.membership.findUnique({ where: key });
    if (mode === "add" && existing) throw errors.alreadyExists("MEMB-3x1s", `user "${t.userId}" is already a member of ${t.type} "${t.contextId}"`);
    if (mode !== "add" && !existing) throw errors.notFound("MEMB-n0tf", `membership "${id}" not found`);
    const unique = roles ? [...new Set(roles)] : [];
    if (mode === "change" && JSON.stringify(existing!.roles) === JSON.stringify(unique)) {
      return { id, sequence: existing!.sequence, changeDate: existing!.changeDate, instanceId: t.instanceId, resourceOwner };
    }
    const defs = memberEvents[t.type];
    const ref = { aggregateId, resourceOwner };
    const [e] = await w.push(t.instanceId, t.creator, [
      mode === "remove"
        ? defs.removed.event(ref, { userId: t.userId })
        : defs[mode === "add" ? "added" : "changed"].event(ref, { userId: t.userId, roles: unique }),
    ]);
    return { id, sequence: e!.sequence, changeDate: e!.createdAt, instanceId: t.instanceId, resourceOwner };
  });
  return result;
}

export const addMembership = (es: EventStore, t: Target, roles: string[]) => writeMembership(es, t, roles, "add");
export const changeMembership = (es: EventStore, t: Target, roles: string[]) => writeMembership(es, t, roles, "change");
export const removeMembership = (es: EventStore, t: Target) => writeMembership(es, t, undefined, "remove");
