import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { Prisma as P, UserGrant as GrantRow } from "../../../gen/prisma/client.js";
import {
  CreateUserGrantResponseSchema,
  DeleteUserGrantResponseSchema,
  GetUserGrantResponseSchema,
  GetUserGrantSchema,
  PatchUserGrantResponseSchema,
  SearchUserGrantsResponseSchema,
  UserGrantService,
  type UserGrantSearchFilter,
} from "../../../gen/svc/resources/usergrant/v3alpha/user_grant_service_pb.js";
import { callInfo } from "../../authz/context.js";
import type { ChangeDetails } from "../../command/aggregate.js";
import { createUserGrant, patchUserGrant, removeUserGrant } from "../../command/user-grants.js";
import { errors } from "../../errors/errors.js";
import type { EventStore } from "../../eventstore/eventstore.js";
import type { ProjectionCache } from "../../query/cache.js";
import { countKey, searchPage } from "../../query/list.js";
import type { TenancyQueries } from "../../query/tenancy.js";
import type { Database } from "../../storage/database.js";
import { toResourceDetails } from "../convert.js";
import { projectScope } from "../project/service.js";
import { authorizeInProject, readableScope } from "../scope.js";

export interface UserGrantDeps {
  es: EventStore;
  db: Database;
  cache: ProjectionCache;
  tenancy: TenancyQueries;
}

function filterWhere(f: UserGrantSearchFilter): P.UserGrantWhereInput {
  switch (f.filter.case) {
    case "userId":
      return { userId: f.filter.value };
    case "projectId":
      return { projectId: f.filter.value };
    case "roleKey":
      return { roleKeys: { has: f.filter.value } };
    default:
      return {};
  }
}

const toGet = (g: GrantRow) =>
  create(GetUserGrantSchema, {
    details: toResourceDetails({ ...g, resourceOwner: g.orgId }, "org"),
    grant: { userId: g.userId, projectId: g.projectId, roleKeys: g.roleKeys },
  });

export function userGrantService(deps: UserGrantDeps): ServiceImpl<typeof UserGrantService> {
  const { es, db, tenancy } = deps;
  const details = (d: ChangeDetails) => toResourceDetails(d, "org");

  async function resolve(ctx: HandlerContext, id: string) {
    const info = callInfo(ctx);
    const grant = await db.prisma.userGrant.findFirst({ where: { id, instanceId: info.target.instance.id } });
    if (!grant) throw errors.notFound("GRANT-n0t1", `user grant "${id}" not found`);
    await authorizeInProject(info, tenancy, grant.orgId, grant.projectId, info.permission);
    return { grant, args: { instanceId: grant.instanceId, id, creator: info.caller.userId } };
  }

  return {
    async createUserGrant(req, ctx) {
      const info = callInfo(ctx);
      const g = req.grant!;
      const project = await db.prisma.project.findFirst({ where: { id: g.projectId, instanceId: info.target.instance.id } });
      if (!project) throw errors.notFound("GRANT-pr0k", `project "${g.projectId}" not found`);
      await authorizeInProject(info, tenancy, project.orgId, project.id, info.permission);
      const d = await createUserGrant(es, { instanceId: project.instanceId, userId: g.userId, projectId: project.id, roleKeys: g.roleKeys, creator: info.caller.userId });
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
      const scope = projectScope(readableScope(info, "user.grant.read"), "projectId") as P.UserGrantWhereInput;
      const where: P.UserGrantWhereInput = { AND: [{ instanceId: info.target.instance.id }, scope, ...req.filters.map(filterWhere)] };
      const { rows, details } = await searchPage(db, deps.cache, req.query, countKey("userGrant", where), ({ skip, take, order }) => [
        db.prisma.userGrant.findMany({ where, orderBy: [{ createdAt: order }, { id: order }], skip, take }),
        () => db.prisma.userGrant.count({ where }),
      ]);
      return create(SearchUserGrantsResponseSchema, { details, result: rows.map(toGet) });
    },
  };
}
