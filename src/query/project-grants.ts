import type { Prisma as P, ProjectGrant } from "../../gen/prisma/client.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { search, type ListWindow, type ReadScope, type Searchable } from "./list.js";
import { tableSources } from "./sources.js";

export type ProjectGrantRow = ProjectGrant;

/** The columns of a grant's answer. */
const grantColumns = {
  id: true,
  orgId: true,
  projectId: true,
  grantedOrgId: true,
  roleKeys: true,
  state: true,
  sequence: true,
  changeDate: true,
} satisfies P.ProjectGrantSelect;
export type ProjectGrantView = P.ProjectGrantGetPayload<{ select: typeof grantColumns }>;

/** What a project grant search filters by: the project, the organisation granted to. */
export type ProjectGrantFilter = { case: "projectId"; value: string } | { case: "grantedOrgId"; value: string };

// Newest first by default: the index (instance, created, id) serves the order.
const grants: Searchable<ProjectGrantFilter, P.ProjectGrantWhereInput, P.ProjectGrantOrderByWithRelationInput, ProjectGrantView> = {
  table: "projectGrant",
  sources: tableSources.projectGrant,
  filters: {
    projectId: (projectId) => ({ projectId }),
    grantedOrgId: (grantedOrgId) => ({ grantedOrgId }),
  },
  defaultSort: "createdAt",
  tieBreaker: ["id"],
  select: grantColumns,
};

/** Reads of project grants (UserGrantQueries and MembershipQueries read them for their own scopes). */
export class ProjectGrantQueries {
  constructor(
    private readonly db: Database,
    private readonly cache: ProjectionCache,
  ) {}

  /** The grant, when it belongs to the instance. */
  byId(instanceId: string, id: string): Promise<ProjectGrantRow | null> {
    return this.db.reads.prisma.projectGrant.findFirst({ where: { id, instanceId } });
  }

  /** The grant, when it is one of the project's. */
  ofProject(projectId: string, id: string): Promise<ProjectGrantRow | null> {
    return this.db.reads.prisma.projectGrant.findFirst({ where: { id, projectId } });
  }

  /**
   * Grants of projects in readable organisations or of member projects, grants made to readable organisations,
   * and the grants the caller is a member of (`ownGrantIds`).
   */
  search(instanceId: string, readable: ReadScope, ownGrantIds: string[], filters: ProjectGrantFilter[], window: ListWindow) {
    const scope: P.ProjectGrantWhereInput =
      readable.orgIds === "all"
        ? {}
        : {
            OR: [
              { orgId: { in: readable.orgIds } },
              { grantedOrgId: { in: readable.orgIds } },
              { projectId: { in: readable.projectIds } },
              { id: { in: ownGrantIds } },
            ],
          };
    return search(this.db, this.cache, grants, [{ instanceId }, scope], { filters }, window);
  }
}
