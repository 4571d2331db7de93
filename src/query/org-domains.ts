import type { OrgDomain, Prisma as P } from "../../gen/prisma/client.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { search, textFilter, type ListWindow, type Searchable } from "./list.js";
import { tableSources } from "./sources.js";

export type OrgDomainRow = OrgDomain;

/** The columns of a domain's answer: not its validation token. */
const domainColumns = {
  orgId: true,
  domain: true,
  verified: true,
  isPrimary: true,
  generated: true,
  validationType: true,
  sequence: true,
  changeDate: true,
} satisfies P.OrgDomainSelect;
export type OrgDomainView = P.OrgDomainGetPayload<{ select: typeof domainColumns }>;

/** What a search of one organisation's domains asks for: `domainContains` as written (no wildcards), "" for any. */
export interface OrgDomainCriteria {
  domainContains: string;
  verifiedOnly: boolean;
}

type OrgDomainFilter = { case: "domainContains"; value: string } | { case: "verified"; value: boolean };

// Searched within one organisation, where the domain is unique: the primary key (organisation, domain) finds them.
const domains: Searchable<OrgDomainFilter, P.OrgDomainWhereInput, P.OrgDomainOrderByWithRelationInput, OrgDomainView> = {
  table: "orgDomain",
  sources: tableSources.orgDomain,
  filters: {
    // Domains are stored in lower case: a search ignores case.
    domainContains: (text) => ({ domain: textFilter({ text: text.toLowerCase(), match: "contains" }) }),
    verified: (verified) => ({ verified }),
  },
  defaultSort: "createdAt",
  tieBreaker: ["domain"],
  select: domainColumns,
};

/** Reads of organisations' domains. */
export class OrgDomainQueries {
  constructor(
    private readonly db: Database,
    private readonly cache: ProjectionCache,
  ) {}

  /** The organisation's domain, however the caller spelt it (surrounding spaces, case). */
  byName(orgId: string, domain: string): Promise<OrgDomainRow | null> {
    return this.db.reads.prisma.orgDomain.findUnique({ where: { orgId_domain: { orgId, domain: domain.trim().toLowerCase() } } });
  }

  search(orgId: string, criteria: OrgDomainCriteria, window: ListWindow) {
    const filters: OrgDomainFilter[] = [
      ...(criteria.domainContains ? [{ case: "domainContains" as const, value: criteria.domainContains }] : []),
      ...(criteria.verifiedOnly ? [{ case: "verified" as const, value: true }] : []),
    ];
    return search(this.db, this.cache, domains, [{ orgId }], { filters }, window);
  }
}
