import type { Prisma as P, UserGrant } from "../../gen/prisma/client.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import type { ProjectQueries } from "./projects.js";
import { tableSources } from "./sources.js";
import { readableWhere, search, type ListWindow, type ReadScope, type SearchRequest, type Searchable } from "./list.js";

export type UserGrantRow = UserGrant;

/** The columns of a grant's answer. */
const grantColumns = { id: true, orgId: true, userId: true, projectId: true, roleKeys: true, sequence: true, changeDate: true } satisfies P.UserGrantSelect;
export type UserGrantView = P.UserGrantGetPayload<{ select: typeof grantColumns }>;

/** What a user grant search filters by. */
export type UserGrantFilter = { case: "userId"; value: string } | { case: "projectId"; value: string } | { case: "roleKey"; value: string };

// The request names no sorting field: newest first, by default.
const grants: Searchable<UserGrantFilter, P.UserGrantWhereInput, P.UserGrantOrderByWithRelationInput, UserGrantView> = {
  table: "userGrant",
  sources: tableSources.userGrant,
  filters: {
    userId: (userId) => ({ userId }),
    projectId: (projectId) => ({ projectId }),
    roleKey: (key) => ({ roleKeys: { has: key } }),
  },
  defaultSort: "createdAt",
  tieBreaker: ["id"],
  select: grantColumns,
};

/** Reads of user grants. */
/**
 * Whether `userId` may sign in to an application of `projectId`: a project that checks roles (project_role_check)
 * lets in only users with a grant of it. Every way to a user's tokens for a client asks this (the authorization
 * request's completion, by the login UI or a custom one, and token exchange).
 */
export async function grantAllowsSignIn(projects: ProjectQueries, grants: UserGrantQueries, projectId: string | undefined, userId: string): Promise<boolean> {
  if (!projectId || !(await projects.checksRoles(projectId))) return true;
  return (await grants.rolesOn(userId, projectId)) !== null;
}

export class UserGrantQueries {
  constructor(
    private readonly db: Database,
    private readonly cache: ProjectionCache,
  ) {}

  byId(instanceId: string, id: string): Promise<UserGrantRow | null> {
    return this.db.reads.prisma.userGrant.findFirst({ where: { id, instanceId } });
  }

  /** The user's roles on a project, with the organisation that granted them and its primary domain (the token role claims). */
  async rolesOn(userId: string, projectId: string): Promise<{ roleKeys: string[]; orgId: string; orgDomain: string } | null> {
    const grant = await this.db.reads.prisma.userGrant.findUnique({ where: { userId_projectId: { userId, projectId } } });
    if (!grant) return null;
    // A user of a granted organisation: its roles count while the project grant is active, and name its organisation.
    const user = await this.db.reads.prisma.user.findUnique({ where: { id: userId }, select: { orgId: true } });
    const orgId = user?.orgId ?? grant.orgId;
    if (orgId !== grant.orgId) {
      const projectGrant = await this.db.reads.prisma.projectGrant.findUnique({ where: { projectId_grantedOrgId: { projectId, grantedOrgId: orgId } } });
      if (projectGrant?.state !== "active") return null;
    }
    const org = await this.db.reads.prisma.org.findUnique({ where: { id: orgId }, select: { primaryDomain: true } });
    return { roleKeys: grant.roleKeys, orgId, orgDomain: org?.primaryDomain ?? "" };
  }

  /**
   * Grants on projects in readable organisations, on projects the caller is a member of, and, through project grants
   * the caller is a member of (`grantIds`), those of the granted organisation's users on the granted project.
   */
  async search(instanceId: string, readable: ReadScope, req: SearchRequest<UserGrantFilter>, window: ListWindow, grantIds: string[] = []) {
    const viaGrants = grantIds.length
      ? (await this.db.reads.prisma.projectGrant.findMany({ where: { id: { in: grantIds }, instanceId, state: "active" } })).map((g) => ({
          projectId: g.projectId,
          userOrgId: g.grantedOrgId,
        }))
      : [];
    const scope: P.UserGrantWhereInput = viaGrants.length
      ? { OR: [readableWhere(readable, "orgId", "projectId"), ...viaGrants] }
      : readableWhere(readable, "orgId", "projectId");
    return search(this.db, this.cache, grants, [{ instanceId }, scope], req, window);
  }

  /** Whether one of these project grants (active) lets its members manage the grants of `userOrgId`'s users on the project. */
  async grantCovers(instanceId: string, grantIds: string[], projectId: string, userOrgId: string): Promise<boolean> {
    if (!grantIds.length) return false;
    const found = await this.db.reads.prisma.projectGrant.findFirst({
      where: { id: { in: grantIds }, instanceId, projectId, grantedOrgId: userOrgId, state: "active" },
      select: { id: true },
    });
    return !!found;
  }
}
