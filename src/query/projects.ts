import type { Prisma as P, Project, ProjectRole } from "../../gen/prisma/client.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { readRow, tableSources } from "./sources.js";
import { readableWhere, search, textFilter, type ListWindow, type ReadScope, type SearchRequest, type Searchable, type TextCriterion } from "./list.js";

export type ProjectRow = Project;
export type ProjectRoleRow = ProjectRole;

/** The columns of a project's answer. */
const projectColumns = {
  id: true,
  orgId: true,
  name: true,
  state: true,
  projectRoleAssertion: true,
  projectRoleCheck: true,
  sequence: true,
  changeDate: true,
} satisfies P.ProjectSelect;
export type ProjectView = P.ProjectGetPayload<{ select: typeof projectColumns }>;

/** What a project search filters by. */
export type ProjectFilter = { case: "inIds"; value: string[] } | { case: "name"; value: TextCriterion } | { case: "organizationId"; value: string };

export type ProjectSort = "id" | "creationDate" | "changeDate" | "name";

const projects: Searchable<ProjectFilter, P.ProjectWhereInput, P.ProjectOrderByWithRelationInput, ProjectView, ProjectSort> = {
  table: "project",
  sources: tableSources.project,
  filters: {
    inIds: (ids) => ({ id: { in: ids } }),
    name: (v) => ({ name: textFilter(v) }),
    organizationId: (orgId) => ({ orgId }),
  },
  sortColumns: { id: "id", creationDate: "createdAt", changeDate: "changeDate", name: "name" },
  defaultSort: "createdAt",
  tieBreaker: ["id"],
  select: projectColumns,
};

// Searched within one project, where the key is unique: the primary key (project, key) serves the sort, and
// the key prefix is checked on the project's roles alone.
const roles: Searchable<never, P.ProjectRoleWhereInput, P.ProjectRoleOrderByWithRelationInput, Pick<ProjectRoleRow, "key" | "displayName" | "group">> = {
  table: "projectRole",
  sources: tableSources.projectRole,
  filters: {},
  defaultSort: "key",
  tieBreaker: ["key"],
  select: { key: true, displayName: true, group: true },
};

/** Reads of projects and their roles; `byId` is also the project a request names, for its authorization. */
export class ProjectQueries {
  constructor(
    private readonly db: Database,
    private readonly cache: ProjectionCache,
  ) {}

  byId(instanceId: string, id: string): Promise<ProjectRow | null> {
    return this.db.reads.prisma.project.findFirst({ where: { id, instanceId } });
  }

  /** Whether the project puts its users' roles into tokens; every token of its applications asks, so it is cached. */
  async assertsRoles(projectId: string): Promise<boolean> {
    return !!(await this.cachedRow(projectId))?.projectRoleAssertion;
  }

  /** Whether only users with a grant of the project sign in to its applications (project_role_check); cached. */
  async checksRoles(projectId: string): Promise<boolean> {
    return !!(await this.cachedRow(projectId))?.projectRoleCheck;
  }

  private cachedRow(projectId: string) {
    return this.cache.get(
      `oidc-project:${projectId}`,
      () => this.db.reads.prisma.project.findUnique({ where: { id: projectId } }),
      readRow("project", projectId),
    );
  }

  /** Projects of readable organisations and those the caller is a member of. */
  search(instanceId: string, readable: ReadScope, req: SearchRequest<ProjectFilter, ProjectSort>, window: ListWindow) {
    return search(this.db, this.cache, projects, [{ instanceId }, readableWhere(readable, "orgId", "id")], req, window);
  }

  /** The project's roles, by key; `keyPrefix` ignores case. */
  searchRoles(projectId: string, keyPrefix: string, window: ListWindow) {
    const scope: P.ProjectRoleWhereInput[] = [{ projectId }, ...(keyPrefix ? [{ key: { startsWith: keyPrefix, mode: "insensitive" as const } }] : [])];
    return search(this.db, this.cache, roles, scope, {}, window);
  }
}
