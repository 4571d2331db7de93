import { Code } from "@connectrpc/connect";
import { errors } from "../../errors/errors.js";
import { addMembership } from "../memberships.js";
import { createProjectGrant } from "../project-grants.js";
import { createUserGrant } from "../user-grants.js";
import { inInstance, isCode, projectInOrg, type OrgImport } from "./context.js";

/** User grants (one per user and project); users and projects may be of other organisations of the instance. */
export async function importUserGrants(o: OrgImport): Promise<void> {
  const { db } = o.deps;
  for (const [i, g] of (o.data.userGrants ?? []).entries()) {
    const id = g.userGrantId || `${g.userId ?? ""}:${g.projectId ?? ""}`;
    await o.each("user_grant", id, async () => {
      if (!g.userId || !g.projectId) throw errors.invalidArgument("IMPORT-gr4n", `invalid user_grants[${i}]: user_id and project_id are required`);
      const there = await db.prisma.userGrant.findUnique({ where: { userId_projectId: { userId: g.userId, projectId: g.projectId } } });
      if (!there) {
        await inInstance(db, "user", g.userId, o.req.instanceId, `user_grants[${i}].user_id`);
        await inInstance(db, "project", g.projectId, o.req.instanceId, `user_grants[${i}].project_id`);
        await createUserGrant(o.deps.es, {
          ...o.base,
          ...(g.userGrantId ? { id: g.userGrantId } : {}),
          userId: g.userId,
          projectId: g.projectId,
          roleKeys: g.roleKeys ?? [],
        });
      }
      o.ok.userGrants.push({ userId: g.userId, projectId: g.projectId });
    });
  }
}

/** Members of the organisation and of its projects; a membership already there counts as done. */
export async function importMembers(o: OrgImport): Promise<void> {
  const members: [type: "org" | "project", contextId: string, m: { userId?: string; roles?: string[] }, field: string][] = [
    ...(o.data.orgMembers ?? []).map((m, i) => ["org", o.orgId, m, `org_members[${i}]`] as ["org", string, typeof m, string]),
    ...(o.data.projectMembers ?? []).map((m, i) => ["project", m.projectId ?? "", m, `project_members[${i}]`] as ["project", string, typeof m, string]),
  ];
  for (const [type, contextId, m, field] of members) {
    await o.each(`${type}_member`, `${contextId}:${m.userId ?? ""}`, async () => {
      if (!m.userId || !contextId)
        throw errors.invalidArgument("IMPORT-m3mb", `invalid ${field}: user_id${type === "project" ? " and project_id are" : " is"} required`);
      if (type === "project") await projectInOrg(o.deps.db, contextId, o.orgId, `${field}.project_id`);
      try {
        await addMembership(o.deps.es, { ...o.base, type, contextId, userId: m.userId }, m.roles ?? []);
      } catch (err) {
        if (!isCode(err, Code.AlreadyExists)) throw err;
      }
      if (type === "org") o.ok.orgMembers.push(m.userId);
      else o.ok.projectMembers.push({ projectId: contextId, userId: m.userId });
    });
  }
}

/** The organisation's projects granted to other organisations, with their IDs (user grants and members name them). */
export async function importProjectGrants(o: OrgImport): Promise<void> {
  const { db } = o.deps;
  for (const [i, entry] of (o.data.projectGrants ?? []).entries()) {
    const g = entry.projectGrant ?? {};
    const grantId = entry.grantId ?? "";
    await o.each("project_grant", grantId, async () => {
      if (!grantId || !g.projectId || !g.grantedOrgId)
        throw errors.invalidArgument("IMPORT-pg01", `invalid project_grants[${i}]: grant_id, project_grant.project_id and granted_org_id are required`);
      const there = await db.prisma.projectGrant.findUnique({ where: { id: grantId }, select: { projectId: true } });
      if (there && there.projectId !== g.projectId) throw errors.alreadyExists("IMPORT-pg02", `the project grant ID "${grantId}" is used elsewhere`);
      if (!there) {
        await projectInOrg(db, g.projectId, o.orgId, `project_grants[${i}].project_grant.project_id`);
        await createProjectGrant(o.deps.es, { ...o.base, projectId: g.projectId, grantedOrgId: g.grantedOrgId, roleKeys: g.roleKeys ?? [], id: grantId });
      }
      o.ok.projectGrants.push({ grantId, projectId: g.projectId, orgId: g.grantedOrgId });
    });
  }
}

/** Members of the organisation's project grants (users of the granted organisations). */
export async function importProjectGrantMembers(o: OrgImport): Promise<void> {
  for (const [i, m] of (o.data.projectGrantMembers ?? []).entries()) {
    const grantId = m.grantId ?? "";
    await o.each("project_grant_member", `${grantId}:${m.userId ?? ""}`, async () => {
      if (!grantId || !m.userId) throw errors.invalidArgument("IMPORT-pgm1", `invalid project_grant_members[${i}]: grant_id and user_id are required`);
      const grant = await o.deps.db.prisma.projectGrant.findFirst({ where: { id: grantId, orgId: o.orgId }, select: { projectId: true } });
      if (!grant) throw errors.notFound("IMPORT-pgm2", `project_grant_members[${i}].grant_id: no grant "${grantId}" of this organization's projects`);
      try {
        await addMembership(o.deps.es, { ...o.base, type: "project_grant", contextId: grantId, userId: m.userId }, m.roles ?? []);
      } catch (err) {
        if (!isCode(err, Code.AlreadyExists)) throw err;
      }
      o.ok.projectGrantMembers.push({ projectId: grant.projectId, grantId, userId: m.userId });
    });
  }
}
