import type { Org, Prisma as P } from "../../gen/prisma/client.js";
import { OrganizationFieldName, OrganizationState, type OrganizationSearchFilter } from "../../gen/svc/resources/org/v3alpha/org_pb.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { tableSources } from "./sources.js";
import { readableWhere, search, textFilter, type ReadScope, type SearchRequest, type Searchable } from "./list.js";

export type OrgRow = Org;

/** The columns of an organisation's answer. */
const orgColumns = { id: true, instanceId: true, name: true, state: true, primaryDomain: true, sequence: true, changeDate: true } satisfies P.OrgSelect;
export type OrgView = P.OrgGetPayload<{ select: typeof orgColumns }>;

const orgs: Searchable<OrganizationSearchFilter, P.OrgWhereInput, P.OrgOrderByWithRelationInput, OrgView, OrganizationFieldName> = {
  table: "org",
  sources: tableSources.org,
  filters: {
    inIds: (v) => ({ id: { in: v.ids } }),
    name: (v) => ({ name: textFilter(v.name, v.method) }),
    domain: (v) => ({ primaryDomain: textFilter(v.domain, v.method) }),
    state: (v) => ({ state: v.state === OrganizationState.INACTIVE ? "inactive" : "active" }),
  },
  sortColumns: {
    [OrganizationFieldName.ID]: "id",
    [OrganizationFieldName.CREATION_DATE]: "createdAt",
    [OrganizationFieldName.CHANGE_DATE]: "changeDate",
    [OrganizationFieldName.NAME]: "name",
  },
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
    return this.db.prisma.org.findFirst({ where: { id, instanceId } });
  }

  search(instanceId: string, readable: ReadScope, req: SearchRequest<OrganizationSearchFilter, OrganizationFieldName>) {
    return search(this.db, this.cache, orgs, [{ instanceId }, readableWhere(readable, "id")], req);
  }
}
