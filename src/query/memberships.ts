import type { Membership, Prisma as P } from "../../gen/prisma/client.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { search, type ListWindow, type SearchRequest, type Searchable } from "./list.js";
import { tableSources } from "./sources.js";

export type MembershipRow = Membership;

/** The columns of a membership's answer. */
const membershipColumns = { userId: true, contextType: true, contextId: true, roles: true, sequence: true, changeDate: true } satisfies P.MembershipSelect;
export type MembershipView = P.MembershipGetPayload<{ select: typeof membershipColumns }>;

/** What a membership search filters by; a context as the projection stores it. */
export type MembershipFilter =
  | { case: "userId"; value: string }
  | { case: "role"; value: string }
  | { case: "context"; value: { type: string; contextId: string } };

/** Whose members a search may read, as the caller's permissions have it. */
export interface MemberVisibility {
  /** The instance's (iam.member.read). */
  instance: boolean;
  /** Organisations' (org.member.read). */
  orgs: "all" | string[];
  /** Projects' (project.member.read): those of these organisations, and these projects. */
  projectOrgs: "all" | string[];
  projects: string[];
  /** Project grants' (project.grant.member.read): grants of these organisations' projects, of these projects, and these grants. */
  grantOrgs: "all" | string[];
  grantProjects: string[];
  grants: string[];
}

const memberships: Searchable<MembershipFilter, P.MembershipWhereInput, P.MembershipOrderByWithRelationInput, MembershipView> = {
  table: "membership",
  sources: tableSources.membership,
  filters: {
    userId: (userId) => ({ userId }),
    role: (role) => ({ roles: { has: role } }),
    context: (c) => ({ contextType: c.type, contextId: c.contextId }),
  },
  // Recently changed first, by default; a membership is one user in one context.
  defaultSort: "changeDate",
  tieBreaker: ["userId", "contextType", "contextId"],
  select: membershipColumns,
};

/** Reads of memberships (TenancyQueries has a user's memberships for authorization). */
export class MembershipQueries {
  constructor(
    private readonly db: Database,
    private readonly cache: ProjectionCache,
  ) {}

  /** The membership of the user in the context, when it belongs to the instance. */
  async byKey(instanceId: string, key: { userId: string; type: string; contextId: string }): Promise<MembershipRow | null> {
    const row = await this.db.reads.prisma.membership.findUnique({
      where: { userId_contextType_contextId: { userId: key.userId, contextType: key.type, contextId: key.contextId } },
    });
    return row?.instanceId === instanceId ? row : null;
  }

  /** Memberships of the instance and its organisations and projects that `visible` allows; never the system's. */
  async search(instanceId: string, visible: MemberVisibility, req: SearchRequest<MembershipFilter>, window: ListWindow) {
    const readable: P.MembershipWhereInput[] = [];
    if (visible.instance) readable.push({ contextType: "instance" });
    readable.push({ contextType: "org", ...(visible.orgs === "all" ? {} : { contextId: { in: visible.orgs } }) });
    const projectIds =
      visible.projectOrgs === "all"
        ? undefined
        : [
            ...(await this.db.reads.prisma.project.findMany({ where: { instanceId, orgId: { in: visible.projectOrgs } }, select: { id: true } })).map(
              (p) => p.id,
            ),
            ...visible.projects,
          ];
    readable.push({ contextType: "project", ...(projectIds ? { contextId: { in: projectIds } } : {}) });
    // A grant's members: readable in its project's organisation, through its project, or by the grant's own members.
    if (visible.grantOrgs === "all") readable.push({ contextType: "project_grant" });
    else {
      const grantIds = (
        await this.db.reads.prisma.projectGrant.findMany({
          where: { instanceId, OR: [{ orgId: { in: visible.grantOrgs } }, { projectId: { in: visible.grantProjects } }] },
          select: { id: true },
        })
      ).map((g) => g.id);
      readable.push({ contextType: "project_grant", contextId: { in: [...grantIds, ...visible.grants] } });
    }
    const scope: P.MembershipWhereInput[] = [{ instanceId, contextType: { not: "system" } }, { OR: readable }];
    return search(this.db, this.cache, memberships, scope, req, window);
  }
}
