import type { Org, Prisma as P } from "../../gen/prisma/client.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { tableSources } from "./sources.js";
import { readableWhere, search, textFilter, type ListWindow, type ReadScope, type SearchRequest, type Searchable, type TextCriterion } from "./list.js";

export type OrgRow = Org;

/** The columns of an organisation's answer. */
const orgColumns = { id: true, instanceId: true, name: true, state: true, primaryDomain: true, sequence: true, changeDate: true } satisfies P.OrgSelect;
export type OrgView = P.OrgGetPayload<{ select: typeof orgColumns }>;

/** What an organisation search filters by; `domain` is the primary domain. */
export type OrgFilter =
  | { case: "inIds"; value: string[] }
  | { case: "name"; value: TextCriterion }
  | { case: "domain"; value: TextCriterion }
  | { case: "state"; value: "active" | "inactive" };

export type OrgSort = "id" | "creationDate" | "changeDate" | "name";

const orgs: Searchable<OrgFilter, P.OrgWhereInput, P.OrgOrderByWithRelationInput, OrgView, OrgSort> = {
  table: "org",
  sources: tableSources.org,
  filters: {
    inIds: (ids) => ({ id: { in: ids } }),
    name: (v) => ({ name: textFilter(v) }),
    domain: (v) => ({ primaryDomain: textFilter(v) }),
    state: (state) => ({ state }),
  },
  sortColumns: { id: "id", creationDate: "createdAt", changeDate: "changeDate", name: "name" },
  defaultSort: "createdAt",
  tieBreaker: ["id"],
  // Names are unique in an instance: sorted by alone, so that the (instance, name) index serves the sort.
  unique: ["id", "name"],
  select: orgColumns,
};

/** Reads of organisations as the API shows them (TenancyQueries has the few columns authorization needs). */
export class OrgQueries {
  constructor(
    private readonly db: Database,
    private readonly cache: ProjectionCache,
  ) {}

  byId(instanceId: string, id: string): Promise<OrgRow | null> {
    return this.db.reads.prisma.org.findFirst({ where: { id, instanceId } });
  }

  search(instanceId: string, readable: ReadScope, req: SearchRequest<OrgFilter, OrgSort>, window: ListWindow) {
    return search(this.db, this.cache, orgs, [{ instanceId }, readableWhere(readable, "id")], req, window);
  }
}
