import type { Org, Prisma as P } from "../../gen/prisma/client.js";
import { OrganizationFieldName, OrganizationState, type OrganizationSearchFilter } from "../../gen/svc/resources/org/v3alpha/org_pb.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { readableWhere, search, textFilter, type ReadScope, type SearchRequest, type Searchable } from "./list.js";

export type OrgRow = Org;

const orgs: Searchable<OrganizationSearchFilter, P.OrgWhereInput, P.OrgOrderByWithRelationInput, OrgRow, OrganizationFieldName> = {
  table: "org",
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
  findMany: (db, args) => db.prisma.org.findMany(args),
  count: (db, where) => db.prisma.org.count({ where }),
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
