import type { Prisma as P, UserGrant } from "../../gen/prisma/client.js";
import type { UserGrantSearchFilter } from "../../gen/svc/resources/usergrant/v3alpha/user_grant_service_pb.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { readableWhere, search, type ReadScope, type SearchRequest, type Searchable } from "./list.js";

export type UserGrantRow = UserGrant;

// The request names no sorting field: newest first, by default.
const grants: Searchable<UserGrantSearchFilter, P.UserGrantWhereInput, P.UserGrantOrderByWithRelationInput, UserGrantRow> = {
  table: "userGrant",
  filters: {
    userId: (v) => ({ userId: v }),
    projectId: (v) => ({ projectId: v }),
    roleKey: (v) => ({ roleKeys: { has: v } }),
  },
  defaultSort: "createdAt",
  tieBreaker: ["id"],
  findMany: (db, args) => db.prisma.userGrant.findMany(args),
  count: (db, where) => db.prisma.userGrant.count({ where }),
};

/** Reads of user grants. */
export class UserGrantQueries {
  constructor(
    private readonly db: Database,
    private readonly cache: ProjectionCache,
  ) {}

  byId(instanceId: string, id: string): Promise<UserGrantRow | null> {
    return this.db.prisma.userGrant.findFirst({ where: { id, instanceId } });
  }

  /** Grants on projects in readable organisations and on projects the caller is a member of. */
  search(instanceId: string, readable: ReadScope, req: SearchRequest<UserGrantSearchFilter, number>) {
    return search(this.db, this.cache, grants, [{ instanceId }, readableWhere(readable, "orgId", "projectId")], req);
  }
}
