import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { State } from "../../../gen/svc/resources/object/v3alpha/object_pb.js";
import {
  CreateProjectGrantResponseSchema,
  type CreateProjectGrantRequest,
  DeactivateProjectGrantResponseSchema,
  type DeactivateProjectGrantRequest,
  DeleteProjectGrantResponseSchema,
  type DeleteProjectGrantRequest,
  GetProjectGrantResponseSchema,
  type GetProjectGrantRequest,
  GetProjectGrantSchema,
  PatchProjectGrantResponseSchema,
  type PatchProjectGrantRequest,
  ReactivateProjectGrantResponseSchema,
  type ReactivateProjectGrantRequest,
  SearchProjectGrantsResponseSchema,
  type SearchProjectGrantsRequest,
} from "../../../gen/svc/resources/project/v3alpha/project_service_pb.js";
import { callInfo } from "../../authz/context.js";
import type { ChangeDetails } from "../../command/aggregate.js";
import { createProjectGrant, patchProjectGrant, removeProjectGrant, setProjectGrantState } from "../../command/project-grants.js";
import { errors } from "../../errors/errors.js";
import type { ProjectionCache } from "../../query/cache.js";
import { criteriaOf, listDetails, listWindow } from "../list.js";
import { ProjectGrantQueries, type ProjectGrantFilter, type ProjectGrantView } from "../../query/project-grants.js";
import type { Database } from "../../storage/database.js";
import { orgRowDetails, toResourceDetails } from "../convert.js";
import { readableScope } from "../scope.js";

type Resolve = (ctx: HandlerContext, id: string) => Promise<{ args: { instanceId: string; id: string; creator: string } }>;

const toGet = (g: ProjectGrantView) =>
  create(GetProjectGrantSchema, {
    details: orgRowDetails(g.id, g),
    id: g.id,
    projectId: g.projectId,
    grantedOrganizationId: g.grantedOrgId,
    roleKeys: g.roleKeys,
    state: g.state === "active" ? State.EFFECTIVE_STATE_ACTIVE : State.EFFECTIVE_STATE_INACTIVE,
  });

/**
 * Project grants in the project API: managed in the project's organisation (`resolve` checks the permission
 * there); searches show the grants of projects the caller may read and the grants made to its organisations.
 */
export function projectGrantHandlers(deps: { db: Database; es: Parameters<typeof createProjectGrant>[0]; cache: ProjectionCache }, resolve: Resolve) {
  const grants = new ProjectGrantQueries(deps.db, deps.cache);
  const details = (d: ChangeDetails) => toResourceDetails(d, "org");
  const who = async (ctx: HandlerContext, projectId: string) => {
    const { args } = await resolve(ctx, projectId);
    return { instanceId: args.instanceId, projectId: args.id, creator: args.creator };
  };
  return {
    async createProjectGrant(req: CreateProjectGrantRequest, ctx: HandlerContext) {
      const g = req.grant!;
      const d = await createProjectGrant(deps.es, { ...(await who(ctx, req.projectId)), grantedOrgId: g.grantedOrganizationId, roleKeys: g.roleKeys });
      return create(CreateProjectGrantResponseSchema, { details: details(d) });
    },
    async patchProjectGrant(req: PatchProjectGrantRequest, ctx: HandlerContext) {
      const d = await patchProjectGrant(deps.es, { ...(await who(ctx, req.projectId)), grantId: req.grantId, roleKeys: req.grant!.roleKeys });
      return create(PatchProjectGrantResponseSchema, { details: details(d) });
    },
    async getProjectGrant(req: GetProjectGrantRequest, ctx: HandlerContext) {
      await resolve(ctx, req.projectId);
      const g = await grants.ofProject(req.projectId, req.grantId);
      if (!g) throw errors.notFound("PGRT-n0t1", `grant "${req.grantId}" of project "${req.projectId}" not found`);
      return create(GetProjectGrantResponseSchema, { grant: toGet(g) });
    },
    async searchProjectGrants(req: SearchProjectGrantsRequest, ctx: HandlerContext) {
      const info = callInfo(ctx);
      const readable = readableScope(info, "project.grant.read");
      // Also the grants the caller is a member of.
      const own = info.grantsWith("project.grant.read");
      const filters = criteriaOf(req.filters, (f): ProjectGrantFilter => (f.case === "grantedOrganizationId" ? { case: "grantedOrgId", value: f.value } : f));
      const page = await grants.search(info.target.instance.id, readable, own, filters, listWindow(req.query));
      return create(SearchProjectGrantsResponseSchema, { details: listDetails(page), result: page.rows.map(toGet) });
    },
    async deactivateProjectGrant(req: DeactivateProjectGrantRequest, ctx: HandlerContext) {
      const d = await setProjectGrantState(deps.es, { ...(await who(ctx, req.projectId)), grantId: req.grantId, active: false });
      return create(DeactivateProjectGrantResponseSchema, { details: details(d) });
    },
    async reactivateProjectGrant(req: ReactivateProjectGrantRequest, ctx: HandlerContext) {
      const d = await setProjectGrantState(deps.es, { ...(await who(ctx, req.projectId)), grantId: req.grantId, active: true });
      return create(ReactivateProjectGrantResponseSchema, { details: details(d) });
    },
    async deleteProjectGrant(req: DeleteProjectGrantRequest, ctx: HandlerContext) {
      const d = await removeProjectGrant(deps.es, { ...(await who(ctx, req.projectId)), grantId: req.grantId });
      return create(DeleteProjectGrantResponseSchema, { details: details(d) });
    },
  };
}
