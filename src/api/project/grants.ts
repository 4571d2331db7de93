import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { Prisma as P, ProjectGrant } from "../../../gen/prisma/client.js";
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
import { listDetails, listWindow, projectionState } from "../../query/list.js";
import type { Database } from "../../storage/database.js";
import { toResourceDetails } from "../convert.js";
import { readableScope } from "../scope.js";

type Resolve = (ctx: HandlerContext, id: string) => Promise<{ args: { instanceId: string; id: string; creator: string } }>;

const toGet = (g: ProjectGrant) =>
  create(GetProjectGrantSchema, {
    details: toResourceDetails({ id: g.id, sequence: g.sequence, changeDate: g.changeDate, resourceOwner: g.orgId }, "org"),
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
      const g = await deps.db.prisma.projectGrant.findFirst({ where: { id: req.grantId, projectId: req.projectId } });
      if (!g) throw errors.notFound("PGRT-n0t1", `grant "${req.grantId}" of project "${req.projectId}" not found`);
      return create(GetProjectGrantResponseSchema, { grant: toGet(g) });
    },
    async searchProjectGrants(req: SearchProjectGrantsRequest, ctx: HandlerContext) {
      const info = callInfo(ctx);
      const readable = readableScope(info, "project.grant.read");
      // Also the grants the caller is a member of.
      const own = info.grantsWith("project.grant.read");
      const scope: P.ProjectGrantWhereInput =
        readable.orgIds === "all"
          ? {}
          : {
              OR: [
                { orgId: { in: readable.orgIds } },
                { grantedOrgId: { in: readable.orgIds } },
                { projectId: { in: readable.projectIds } },
                { id: { in: own } },
              ],
            };
      const filters = req.filters.map(
        (f): P.ProjectGrantWhereInput =>
          f.filter.case === "projectId" ? { projectId: f.filter.value } : f.filter.case === "grantedOrganizationId" ? { grantedOrgId: f.filter.value } : {},
      );
      const where: P.ProjectGrantWhereInput = { AND: [{ instanceId: info.target.instance.id }, scope, ...filters] };
      const { skip, take, order } = listWindow(req.query);
      const [rows, total, state] = await Promise.all([
        deps.db.prisma.projectGrant.findMany({ where, orderBy: [{ createdAt: order }, { id: order }], skip, take }),
        deps.db.prisma.projectGrant.count({ where }),
        projectionState(deps.db, deps.cache),
      ]);
      return create(SearchProjectGrantsResponseSchema, { details: listDetails({ take, skip, returned: rows.length, total, state }), result: rows.map(toGet) });
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
