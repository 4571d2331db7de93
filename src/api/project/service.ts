import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { Project as ProjectRow, Prisma as P } from "../../../gen/prisma/client.js";
import {
  GetProjectSchema,
  ProjectFieldName,
  ProjectRoleSchema,
  ProjectState,
  type ProjectSearchFilter,
} from "../../../gen/svc/resources/project/v3alpha/project_pb.js";
import {
  AddProjectRoleResponseSchema,
  CreateProjectResponseSchema,
  DeactivateProjectResponseSchema,
  DeleteProjectResponseSchema,
  GetProjectResponseSchema,
  PatchProjectResponseSchema,
  PatchProjectRoleResponseSchema,
  ProjectService,
  ReactivateProjectResponseSchema,
  RemoveProjectRoleResponseSchema,
  SearchProjectRolesResponseSchema,
  SearchProjectsResponseSchema,
} from "../../../gen/svc/resources/project/v3alpha/project_service_pb.js";
import { callInfo } from "../../authz/context.js";
import type { ChangeDetails } from "../../command/aggregate.js";
import * as projects from "../../command/projects.js";
import { errors } from "../../errors/errors.js";
import type { EventStore } from "../../eventstore/eventstore.js";
import type { ProjectionCache } from "../../query/cache.js";
import { countKey, searchPage, textFilter } from "../../query/list.js";
import type { TenancyQueries } from "../../query/tenancy.js";
import type { Database } from "../../storage/database.js";
import { toResourceDetails } from "../convert.js";
import { authorizeInProject, orgOfRequest, orgTarget, readableScope } from "../scope.js";

export interface ProjectDeps {
  es: EventStore;
  db: Database;
  cache: ProjectionCache;
  tenancy: TenancyQueries;
}

const sortColumns: Record<ProjectFieldName, keyof P.ProjectOrderByWithRelationInput> = {
  [ProjectFieldName.UNSPECIFIED]: "createdAt",
  [ProjectFieldName.ID]: "id",
  [ProjectFieldName.CREATION_DATE]: "createdAt",
  [ProjectFieldName.CHANGE_DATE]: "changeDate",
  [ProjectFieldName.NAME]: "name",
};

function filterWhere(f: ProjectSearchFilter): P.ProjectWhereInput {
  switch (f.filter.case) {
    case "inIds":
      return { id: { in: f.filter.value.ids } };
    case "name":
      return { name: textFilter(f.filter.value.name, f.filter.value.method) };
    case "organizationId":
      return { orgId: f.filter.value.organizationId };
    default:
      return {};
  }
}

const toGetProject = (p: ProjectRow) =>
  create(GetProjectSchema, {
    details: toResourceDetails({ ...p, resourceOwner: p.orgId }, "org"),
    project: { name: p.name, projectRoleAssertion: p.projectRoleAssertion, projectRoleCheck: p.projectRoleCheck },
    state: p.state === "inactive" ? ProjectState.INACTIVE : ProjectState.ACTIVE,
  });

/** Where clause of what a search may see: projects of readable organisations and those the caller is a member of. */
export function projectScope(scope: ReturnType<typeof readableScope>, projectColumn: "id" | "projectId"): Record<string, unknown> {
  if (scope.orgIds === "all") return {};
  return { OR: [{ orgId: { in: scope.orgIds } }, { [projectColumn]: { in: scope.projectIds } }] };
}

export function projectService(deps: ProjectDeps): ServiceImpl<typeof ProjectService> {
  const { es, db, tenancy } = deps;
  const details = (d: ChangeDetails) => toResourceDetails(d, "org");

  /** The project a request names, checked in its organisation or through a project membership. */
  async function resolve(ctx: HandlerContext, id: string) {
    const info = callInfo(ctx);
    const project = await db.prisma.project.findFirst({ where: { id, instanceId: info.target.instance.id } });
    if (!project) throw errors.notFound("PROJ-n0t1", `project "${id}" not found`);
    await authorizeInProject(info, tenancy, project.orgId, project.id, info.permission);
    return { project, args: { instanceId: project.instanceId, id, creator: info.caller.userId } };
  }

  return {
    async createProject(req, ctx) {
      const info = callInfo(ctx);
      const orgId = orgOfRequest(info);
      info.authorize(await orgTarget(tenancy, info.target.instance, orgId));
      const p = req.project!;
      const config = { name: p.name, projectRoleAssertion: p.projectRoleAssertion, projectRoleCheck: p.projectRoleCheck };
      return create(CreateProjectResponseSchema, { details: details(await projects.createProject(es, { instanceId: info.target.instance.id, orgId, creator: info.caller.userId, config })) });
    },

    async patchProject(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      const p = req.project!;
      const changes = { name: p.name, projectRoleAssertion: p.projectRoleAssertion, projectRoleCheck: p.projectRoleCheck };
      return create(PatchProjectResponseSchema, { details: details(await projects.patchProject(es, { ...args, changes })) });
    },

    async getProject(req, ctx) {
      const { project } = await resolve(ctx, req.id);
      return create(GetProjectResponseSchema, { project: toGetProject(project) });
    },

    async deleteProject(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      return create(DeleteProjectResponseSchema, { details: details(await projects.removeProject(es, args)) });
    },

    async searchProjects(req, ctx) {
      const info = callInfo(ctx);
      const scope = projectScope(readableScope(info, "project.read"), "id") as P.ProjectWhereInput;
      const where: P.ProjectWhereInput = { AND: [{ instanceId: info.target.instance.id }, scope, ...req.filters.map(filterWhere)] };
      const { rows, details } = await searchPage(db, deps.cache, req.query, countKey("project", where), ({ skip, take, order }) => {
        const orderBy = [{ [sortColumns[req.sortingColumn]]: order }, { id: order }] as P.ProjectOrderByWithRelationInput[];
        return [db.prisma.project.findMany({ where, orderBy, skip, take }), () => db.prisma.project.count({ where })];
      });
      return create(SearchProjectsResponseSchema, {
        details,
        sortingColumn: req.sortingColumn,
        result: rows.map(toGetProject),
      });
    },

    async deactivateProject(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      return create(DeactivateProjectResponseSchema, { details: details(await projects.setProjectState(es, { ...args, active: false })) });
    },

    async reactivateProject(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      return create(ReactivateProjectResponseSchema, { details: details(await projects.setProjectState(es, { ...args, active: true })) });
    },

    async addProjectRole(req, ctx) {
      const { args } = await resolve(ctx, req.projectId);
      const r = req.role!;
      return create(AddProjectRoleResponseSchema, { details: details(await projects.addRole(es, { ...args, role: { key: r.key, displayName: r.displayName, group: r.group } })) });
    },

    async patchProjectRole(req, ctx) {
      const { args } = await resolve(ctx, req.projectId);
      const changes = { displayName: req.role!.displayName, group: req.role!.group };
      return create(PatchProjectRoleResponseSchema, { details: details(await projects.patchRole(es, { ...args, key: req.key, changes })) });
    },

    async removeProjectRole(req, ctx) {
      const { args } = await resolve(ctx, req.projectId);
      return create(RemoveProjectRoleResponseSchema, { details: details(await projects.removeRole(es, { ...args, key: req.key })) });
    },

    async searchProjectRoles(req, ctx) {
      const { project } = await resolve(ctx, req.projectId);
      const where: P.ProjectRoleWhereInput = { projectId: project.id, ...(req.keyPrefix ? { key: { startsWith: req.keyPrefix, mode: "insensitive" } } : {}) };
      const { rows, details } = await searchPage(db, deps.cache, req.query, countKey("projectRole", where), ({ skip, take, order }) => [
        db.prisma.projectRole.findMany({ where, orderBy: [{ key: order }], skip, take }),
        () => db.prisma.projectRole.count({ where }),
      ]);
      return create(SearchProjectRolesResponseSchema, {
        details,
        result: rows.map((r) => create(ProjectRoleSchema, { key: r.key, displayName: r.displayName, group: r.group })),
      });
    },
  };
}
