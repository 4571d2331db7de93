import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  CreateMembershipResponseSchema,
  DeleteMembershipResponseSchema,
  GetMembershipResponseSchema,
  GetMembershipSchema,
  ListAvailableRolesResponseSchema,
  ListMyMembershipsResponseSchema,
  type MyMembership,
  type MembershipService,
  PatchMembershipResponseSchema,
  SearchMembershipsResponseSchema,
  type MembershipContext,
  type MembershipSearchFilter,
} from "../../../gen/svc/resources/membership/v3alpha/membership_service_pb.js";
import { callInfo, type CallInfo } from "../../authz/context.js";
import { availableRoles } from "../../domain/roles.js";
import type { ChangeDetails } from "../../command/aggregate.js";
import { addMembership, changeMembership, membershipId, parseMembershipId, removeMembership, type MemberContextType } from "../../command/memberships.js";
import { errors } from "../../errors/errors.js";
import type { MembershipRow } from "../../query/tenancy.js";
import { MembershipQueries, type MembershipFilter, type MembershipView } from "../../query/memberships.js";
import { ProjectGrantQueries } from "../../query/project-grants.js";
import { ProjectQueries } from "../../query/projects.js";
import { toResourceDetails } from "../convert.js";
import type { ResourceDeps } from "../deps.js";
import { listDetails, listWindow, searchRequestOf, type SetFilter } from "../list.js";
import { authorizeInProject, orgTarget } from "../scope.js";

/** The permission prefix of members of each kind of context: iam.member.write, org.member.read, ... */
const areaOf: Record<MemberContextType, string> = {
  system: "system.member",
  instance: "iam.member",
  org: "org.member",
  project: "project.member",
  project_grant: "project.grant.member",
};

function contextOf(c: MembershipContext | undefined, instanceId: string, field: string): { type: MemberContextType; contextId: string } {
  switch (c?.context.case) {
    case "instance":
      return { type: "instance", contextId: instanceId };
    case "organizationId":
      return { type: "org", contextId: c.context.value };
    case "projectId":
      return { type: "project", contextId: c.context.value };
    case "projectGrantId":
      return { type: "project_grant", contextId: c.context.value };
    default:
      throw errors.invalidArgument("MEMB-ctx0", `invalid ${field}: a context is required`);
  }
}

function myContext(m: MembershipRow): MyMembership["context"] {
  switch (m.contextType as MemberContextType) {
    case "system":
      return { case: "system", value: true };
    case "instance":
      return { case: "instance", value: true };
    case "org":
      return { case: "organizationId", value: m.contextId };
    case "project":
      return { case: "projectId", value: m.contextId };
    case "project_grant":
      return { case: "projectGrantId", value: m.contextId };
  }
}

export function membershipService(deps: ResourceDeps): ServiceImpl<typeof MembershipService> {
  const { es, tenancy } = deps;
  const memberships = new MembershipQueries(deps.db, deps.cache);
  const projects = new ProjectQueries(deps.db, deps.cache);
  const projectGrants = new ProjectGrantQueries(deps.db, deps.cache);

  /** The permission `<area>.<verb>` in the membership's context. */
  async function authorizeIn(info: CallInfo, type: MemberContextType, contextId: string, verb: "read" | "write" | "delete") {
    const permission = `${areaOf[type]}.${verb}`;
    const instance = info.target.instance;
    if (type === "instance") return info.authorize({ type: "instance", instance }, permission);
    if (type === "org") return info.authorize(await orgTarget(tenancy, instance, contextId), permission);
    // A grant's members are managed where its project is (a grant's own members may read them).
    if (type === "project_grant") {
      const grant = await projectGrants.byId(instance.id, contextId);
      if (!grant) throw errors.notFound("MEMB-gr4k", `project grant "${contextId}" not found`);
      if (info.grantsWith(permission).includes(grant.id)) return;
      return authorizeInProject(info, tenancy, grant.orgId, grant.projectId, permission);
    }
    const project = await projects.byId(instance.id, contextId);
    if (!project) throw errors.notFound("MEMB-pr0j", `project "${contextId}" not found`);
    await authorizeInProject(info, tenancy, project.orgId, project.id, permission);
  }

  function parse(info: CallInfo, id: string) {
    const parsed = parseMembershipId(id);
    if (!parsed || (parsed.type === "instance" && parsed.contextId !== info.target.instance.id))
      throw errors.notFound("MEMB-n0t1", `membership "${id}" not found`);
    return { ...parsed, instanceId: info.target.instance.id, creator: info.caller.userId };
  }

  // A membership of the instance belongs to the instance; of an organisation or project, to the organisation.
  const details = (type: MemberContextType, d: ChangeDetails) => toResourceDetails(d, type === "instance" ? "instance" : "org");

  const toGet = (m: MembershipView) => {
    const type = m.contextType as MemberContextType;
    const context =
      type === "instance"
        ? { case: "instance" as const, value: true }
        : type === "org"
          ? { case: "organizationId" as const, value: m.contextId }
          : type === "project_grant"
            ? { case: "projectGrantId" as const, value: m.contextId }
            : { case: "projectId" as const, value: m.contextId };
    return create(GetMembershipSchema, {
      details: { id: membershipId(type, m.contextId, m.userId), sequence: BigInt(m.sequence), changeDate: timestampFromDate(m.changeDate) },
      membership: { userId: m.userId, context: { context }, roles: m.roles },
    });
  };

  return {
    async createMembership(req, ctx) {
      const info = callInfo(ctx);
      const m = req.membership!;
      const { type, contextId } = contextOf(m.context, info.target.instance.id, "membership.context");
      await authorizeIn(info, type, contextId, "write");
      const d = await addMembership(es, { instanceId: info.target.instance.id, type, contextId, userId: m.userId, creator: info.caller.userId }, m.roles);
      return create(CreateMembershipResponseSchema, { details: details(type, d) });
    },

    async patchMembership(req, ctx) {
      const info = callInfo(ctx);
      const t = parse(info, req.id);
      await authorizeIn(info, t.type, t.contextId, "write");
      return create(PatchMembershipResponseSchema, { details: details(t.type, await changeMembership(es, t, req.membership!.roles)) });
    },

    async getMembership(req, ctx) {
      const info = callInfo(ctx);
      const t = parse(info, req.id);
      await authorizeIn(info, t.type, t.contextId, "read");
      const row = await memberships.byKey(info.target.instance.id, t);
      if (!row) throw errors.notFound("MEMB-n0t2", `membership "${req.id}" not found`);
      return create(GetMembershipResponseSchema, { membership: toGet(row) });
    },

    async deleteMembership(req, ctx) {
      const info = callInfo(ctx);
      const t = parse(info, req.id);
      await authorizeIn(info, t.type, t.contextId, "delete");
      return create(DeleteMembershipResponseSchema, { details: details(t.type, await removeMembership(es, t)) });
    },

    async searchMemberships(req, ctx) {
      const info = callInfo(ctx);
      const instanceId = info.target.instance.id;
      // Readable: the instance's members with iam.member.read; an organisation's with org.member.read there;
      // a project's with project.member.read in its organisation or the project.
      const visible = {
        instance: info.scopeOf("iam.member.read") === "all",
        orgs: info.scopeOf("org.member.read"),
        projectOrgs: info.scopeOf("project.member.read"),
        projects: info.projectsWith("project.member.read"),
        grantOrgs: info.scopeOf("project.grant.member.read"),
        grantProjects: info.projectsWith("project.grant.member.read"),
        grants: info.grantsWith("project.grant.member.read"),
      };
      const criterionOf = (f: SetFilter<MembershipSearchFilter>, field: string): MembershipFilter =>
        f.case === "context" ? { case: "context", value: contextOf(f.value, instanceId, `${field}.context`) } : f;
      const page = await memberships.search(instanceId, visible, searchRequestOf(req, criterionOf), listWindow(req.query));
      return create(SearchMembershipsResponseSchema, { details: listDetails(page), result: page.rows.map(toGet) });
    },

    async listMyMemberships(_req, ctx) {
      const info = callInfo(ctx);
      const instanceId = info.target.instance.id;
      const own = info.caller.memberships.filter((m) => m.contextType === "system" || m.instanceId === instanceId);
      const order = ["system", "instance", "org", "project", "project_grant"];
      own.sort((a, b) => order.indexOf(a.contextType) - order.indexOf(b.contextType) || (a.contextId < b.contextId ? -1 : a.contextId > b.contextId ? 1 : 0));
      return create(ListMyMembershipsResponseSchema, {
        result: own.map((m) => ({ context: myContext(m), roles: m.roles, permissions: info.permissionsOfRoles(m.roles) })),
      });
    },

    async listAvailableRoles(req, ctx) {
      const info = callInfo(ctx);
      if (req.projectGrantId) {
        const grant = await projectGrants.byId(info.target.instance.id, req.projectGrantId);
        if (!grant) throw errors.notFound("MEMB-gr4l", `project grant "${req.projectGrantId}" not found`);
        return create(ListAvailableRolesResponseSchema, { roles: availableRoles("project_grant") });
      }
      if (req.projectId) {
        const project = await projects.byId(info.target.instance.id, req.projectId);
        if (!project) throw errors.notFound("MEMB-pr0k", `project "${req.projectId}" not found`);
        return create(ListAvailableRolesResponseSchema, { roles: availableRoles("project") });
      }
      const type = info.target.type === "system" ? "system" : info.target.type;
      return create(ListAvailableRolesResponseSchema, { roles: availableRoles(type) });
    },
  };
}
