import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { GetProjectSchema, ProjectRoleSchema, ProjectState } from "../../../gen/svc/resources/project/v3alpha/project_pb.js";
import {
  AddProjectRoleResponseSchema,
  CreateProjectResponseSchema,
  DeactivateProjectResponseSchema,
  DeleteProjectResponseSchema,
  GetProjectResponseSchema,
  PatchProjectResponseSchema,
  PatchProjectRoleResponseSchema,
  type ProjectService,
  ReactivateProjectResponseSchema,
  RemoveProjectRoleResponseSchema,
  SearchProjectRolesResponseSchema,
  SearchProjectsResponseSchema,
} from "../../../gen/svc/resources/project/v3alpha/project_service_pb.js";
import { callInfo } from "../../authz/context.js";
import type { ChangeDetails } from "../../command/aggregate.js";
import * as projects from "../../command/projects.js";
import { errors } from "../../errors/errors.js";
import { ProjectQueries, type ProjectView } from "../../query/projects.js";
import { orgRowDetails, toResourceDetails } from "../convert.js";
import type { ResourceDeps } from "../deps.js";
import { listDetails, listWindow } from "../list.js";
import { loadAuthorized, orgOfRequest, orgTarget, readableScope } from "../scope.js";
import { projectGrantHandlers } from "./grants.js";
import { projectSearchOf } from "./search.js";

const toGetProject = (p: ProjectView) =>
  create(GetProjectSchema, {
    details: orgRowDetails(p.id, p),
    project: { name: p.name, projectRoleAssertion: p.projectRoleAssertion, projectRoleCheck: p.projectRoleCheck },
    state: p.state === "inactive" ? ProjectState.INACTIVE : ProjectState.ACTIVE,
  });

export function projectService(deps: ResourceDeps): ServiceImpl<typeof ProjectService> {
  const { es, tenancy } = deps;
  const projectQueries = new ProjectQueries(deps.db, deps.cache);
  const details = (d: ChangeDetails) => toResourceDetails(d, "org");

  /** The project a request names, checked in its organisation or through a project membership. */
  async function resolve(ctx: HandlerContext, id: string) {
    const notFound = () => errors.notFound("PROJ-n0t1", `project "${id}" not found`);
    const { row, args } = await loadAuthorized(
      ctx,
      tenancy,
      id,
      (i) => projectQueries.byId(i, id),
      notFound,
      (p) => ({ orgId: p.orgId, projectId: p.id }),
    );
    return { project: row, args };
  }

  return {
    ...projectGrantHandlers({ db: deps.db, es, cache: deps.cache }, resolve),
    async createProject(req, ctx) {
      const info = callInfo(ctx);
      const orgId = orgOfRequest(info);
      info.authorize(await orgTarget(tenancy, info.target.instance, orgId));
      const p = req.project!;
      const config = { name: p.name, projectRoleAssertion: p.projectRoleAssertion, projectRoleCheck: p.projectRoleCheck };
      return create(CreateProjectResponseSchema, {
        details: details(await projects.createProject(es, { instanceId: info.target.instance.id, orgId, creator: info.caller.userId, config })),
      });
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
      const page = await projectQueries.search(info.target.instance.id, readableScope(info, "project.read"), projectSearchOf(req), listWindow(req.query));
      return create(SearchProjectsResponseSchema, { details: listDetails(page), sortingColumn: req.sortingColumn, result: page.rows.map(toGetProject) });
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
      return create(AddProjectRoleResponseSchema, {
        details: details(await projects.addRole(es, { ...args, role: { key: r.key, displayName: r.displayName, group: r.group } })),
      });
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
      const page = await projectQueries.searchRoles(project.id, req.keyPrefix, listWindow(req.query));
      return create(SearchProjectRolesResponseSchema, {
        details: listDetails(page),
        result: page.rows.map((r) => create(ProjectRoleSchema, { key: r.key, displayName: r.displayName, group: r.group })),
      });
    },
  };
}
