import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  CreateUserGrantResponseSchema,
  DeleteUserGrantResponseSchema,
  GetUserGrantResponseSchema,
  GetUserGrantSchema,
  PatchUserGrantResponseSchema,
  SearchUserGrantsResponseSchema,
  type UserGrantService,
} from "../../../gen/svc/resources/usergrant/v3alpha/user_grant_service_pb.js";
import { type CallInfo, callInfo } from "../../authz/context.js";
import type { ChangeDetails } from "../../command/aggregate.js";
import { createUserGrant, patchUserGrant, removeUserGrant } from "../../command/user-grants.js";
import { errors } from "../../errors/errors.js";
import { ProjectQueries } from "../../query/projects.js";
import { UserGrantQueries, type UserGrantView } from "../../query/user-grants.js";
import { UserQueries } from "../../query/users.js";
import { orgRowDetails, toResourceDetails } from "../convert.js";
import type { ResourceDeps } from "../deps.js";
import { listDetails, listWindow, searchRequestOf } from "../list.js";
import { authorizeInProject, readableScope } from "../scope.js";

const toGet = (g: UserGrantView) =>
  create(GetUserGrantSchema, {
    details: orgRowDetails(g.id, g),
    grant: { userId: g.userId, projectId: g.projectId, roleKeys: g.roleKeys },
  });

export function userGrantService(deps: ResourceDeps): ServiceImpl<typeof UserGrantService> {
  const { es, tenancy } = deps;
  const grants = new UserGrantQueries(deps.db, deps.cache);
  const projects = new ProjectQueries(deps.db, deps.cache);
  const users = new UserQueries(deps.db, deps.cache);
  const details = (d: ChangeDetails) => toResourceDetails(d, "org");

  /**
   * The RPC's permission on a user grant of `projectId` for a user of `userOrgId`: in the project's organisation or
   * the project, or as a member of an active grant of the project to the user's organisation.
   */
  async function authorizeOn(info: CallInfo, project: { orgId: string; id: string }, userOrgId: string | undefined) {
    try {
      await authorizeInProject(info, tenancy, project.orgId, project.id, info.permission);
    } catch (denied) {
      const grantIds = info.grantsWith(info.permission);
      if (!userOrgId || !(await grants.grantCovers(info.target.instance.id, grantIds, project.id, userOrgId))) throw denied;
    }
  }

  async function resolve(ctx: HandlerContext, id: string) {
    const info = callInfo(ctx);
    const instanceId = info.target.instance.id;
    const row = await grants.byId(instanceId, id);
    if (!row) throw errors.notFound("GRANT-n0t1", `user grant "${id}" not found`);
    await authorizeOn(info, { orgId: row.orgId, id: row.projectId }, row.userOrgId);
    return { grant: row, args: { instanceId, id, creator: info.caller.userId } };
  }

  return {
    async createUserGrant(req, ctx) {
      const info = callInfo(ctx);
      const g = req.grant!;
      const project = await projects.byId(info.target.instance.id, g.projectId);
      if (!project) throw errors.notFound("GRANT-pr0k", `project "${g.projectId}" not found`);
      const user = await users.byId(project.instanceId, g.userId);
      await authorizeOn(info, project, user?.orgId);
      const d = await createUserGrant(es, {
        instanceId: project.instanceId,
        userId: g.userId,
        projectId: project.id,
        roleKeys: g.roleKeys,
        creator: info.caller.userId,
      });
      return create(CreateUserGrantResponseSchema, { details: details(d) });
    },

    async patchUserGrant(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      return create(PatchUserGrantResponseSchema, { details: details(await patchUserGrant(es, { ...args, roleKeys: req.grant!.roleKeys })) });
    },

    async getUserGrant(req, ctx) {
      const { grant } = await resolve(ctx, req.id);
      return create(GetUserGrantResponseSchema, { grant: toGet(grant) });
    },

    async deleteUserGrant(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      return create(DeleteUserGrantResponseSchema, { details: details(await removeUserGrant(es, args)) });
    },

    async searchUserGrants(req, ctx) {
      const info = callInfo(ctx);
      // The filters' criteria are the query's as they are: a user, a project, a role key.
      const criteria = searchRequestOf(req, (f) => f);
      const page = await grants.search(
        info.target.instance.id,
        readableScope(info, "user.grant.read"),
        criteria,
        listWindow(req.query),
        info.grantsWith("user.grant.read"),
      );
      return create(SearchUserGrantsResponseSchema, { details: listDetails(page), result: page.rows.map(toGet) });
    },
  };
}
