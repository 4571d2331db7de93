import type { Instance, Prisma as P } from "../../gen/prisma/client.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { search, type ListWindow, type Searchable } from "./list.js";
import { tableSources } from "./sources.js";

export type InstanceFullRow = Instance;

/** The columns of an instance's answer in the system API. */
const instanceColumns = {
  id: true,
  name: true,
  defaultOrgId: true,
  primaryDomain: true,
  blocked: true,
  auditLogRetentionS: true,
  sequence: true,
  changeDate: true,
} satisfies P.InstanceSelect;
export type InstanceView = P.InstanceGetPayload<{ select: typeof instanceColumns }>;

/** What an instance search filters by: its IDs, or a domain it serves. */
export type InstanceFilter = { case: "inIds"; value: string[] } | { case: "domain"; value: string };

/** A domain filter once the instance serving the domain is known (`""`: none serves it, nothing matches). */
type ResolvedFilter = { case: "inIds"; value: string[] } | { case: "id"; value: string };

// The system's instances, newest first by default. Few rows: no index serves the creation-date order.
const instances: Searchable<ResolvedFilter, P.InstanceWhereInput, P.InstanceOrderByWithRelationInput, InstanceView> = {
  table: "instance",
  sources: tableSources.instance,
  filters: {
    inIds: (ids) => ({ id: { in: ids } }),
    id: (id) => ({ id }),
  },
  defaultSort: "createdAt",
  tieBreaker: ["id"],
  select: instanceColumns,
};

/** Reads of instances as the system API shows them (TenancyQueries has the cached reads every request makes). */
export class InstanceQueries {
  constructor(
    private readonly db: Database,
    private readonly cache: ProjectionCache,
  ) {}

  byId(id: string): Promise<InstanceFullRow | null> {
    return this.db.reads.prisma.instance.findUnique({ where: { id } });
  }

  /** The instance a command has just found: its absence is a fault, not a caller's mistake. */
  byIdOrThrow(id: string): Promise<InstanceFullRow> {
    return this.db.reads.prisma.instance.findUniqueOrThrow({ where: { id } });
  }

  byIds(ids: string[]): Promise<InstanceFullRow[]> {
    return this.db.reads.prisma.instance.findMany({ where: { id: { in: ids } } });
  }

  /** The domains of each instance, alphabetically. Read fresh (TenancyQueries.domainsOf caches one instance's). */
  async domainsOf(ids: string[]): Promise<Map<string, string[]>> {
    const rows = await this.db.reads.prisma.instanceDomain.findMany({ where: { instanceId: { in: ids } }, orderBy: { domain: "asc" } });
    const byInstance = new Map<string, string[]>(ids.map((id) => [id, []]));
    for (const r of rows) byInstance.get(r.instanceId)?.push(r.domain);
    return byInstance;
  }

  /** Every instance of the system matching all the filters. */
  async search(filters: InstanceFilter[], window: ListWindow) {
    // The instance a domain names is looked up first: the search's where clause reads the instances table only.
    const resolved = await Promise.all(
      filters.map(async (filter): Promise<ResolvedFilter> => {
        if (filter.case === "inIds") return filter;
        const served = await this.db.reads.prisma.instanceDomain.findUnique({ where: { domain: filter.value.toLowerCase() } });
        return { case: "id", value: served?.instanceId ?? "" };
      }),
    );
    return search(this.db, this.cache, instances, [], { filters: resolved }, window);
  }
}
