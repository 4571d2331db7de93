import type { Application, Prisma as P } from "../../gen/prisma/client.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { tableSources } from "./sources.js";
import { readableWhere, search, textFilter, type ListWindow, type ReadScope, type SearchRequest, type Searchable, type TextCriterion } from "./list.js";

export type ApplicationRow = Application;

/** The columns of an application's answer (`toGetApplication`); the secret hash only tells whether there is a secret. */
const applicationColumns = {
  id: true,
  orgId: true,
  projectId: true,
  name: true,
  kind: true,
  state: true,
  clientId: true,
  secretHash: true,
  config: true,
  sequence: true,
  changeDate: true,
} satisfies P.ApplicationSelect;
export type ApplicationView = P.ApplicationGetPayload<{ select: typeof applicationColumns }>;

/** What an application search filters by. */
export type ApplicationFilter = { case: "inIds"; value: string[] } | { case: "name"; value: TextCriterion } | { case: "projectId"; value: string };

// The request names no sorting field: newest first, by default.
const applications: Searchable<ApplicationFilter, P.ApplicationWhereInput, P.ApplicationOrderByWithRelationInput, ApplicationView> = {
  table: "application",
  sources: tableSources.application,
  filters: {
    inIds: (ids) => ({ id: { in: ids } }),
    name: (v) => ({ name: textFilter(v) }),
    projectId: (projectId) => ({ projectId }),
  },
  defaultSort: "createdAt",
  tieBreaker: ["id"],
  select: applicationColumns,
};

/** Reads of applications. */
export class ApplicationQueries {
  constructor(
    private readonly db: Database,
    private readonly cache: ProjectionCache,
  ) {}

  byId(instanceId: string, id: string): Promise<ApplicationRow | null> {
    return this.db.reads.prisma.application.findFirst({ where: { id, instanceId } });
  }

  /** An application's keys, oldest first (IDs and dates only). */
  keysOf(applicationId: string) {
    return this.db.reads.prisma.applicationKey.findMany({
      where: { applicationId },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      select: { id: true, createdAt: true, expiresAt: true },
    });
  }

  /** Applications of projects in readable organisations and of projects the caller is a member of. */
  search(instanceId: string, readable: ReadScope, req: SearchRequest<ApplicationFilter>, window: ListWindow) {
    return search(this.db, this.cache, applications, [{ instanceId }, readableWhere(readable, "orgId", "projectId")], req, window);
  }
}
