import type { InstanceRow, OrgRow } from "../domain/contexts.js";
import { requestedOrgOf } from "../domain/org-scopes.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { readFrom, readRow } from "./sources.js";

export type { InstanceRow, OrgRow } from "../domain/contexts.js";

export interface TokenOwner {
  userId: string;
  instanceId: string;
  orgId: string;
  expiresAt: Date | null;
}

/** A user that may act: it exists, is active, and so is its organisation. */
export interface UsableUser {
  id: string;
  instanceId: string;
  orgId: string;
}

/**
 * The user, when it may act now: it exists, it is active, and so is its organisation. The one answer to "may
 * this user act" that every credential, token and session check asks, so that deactivating an organisation (or
 * removing a user) stops its users everywhere at once, not only at the password form. Read fresh: commands
 * deciding on the current state call this; request paths call the cached `TenancyQueries.usableUser`.
 */
export async function usableUserOf(db: Database, userId: string): Promise<UsableUser | null> {
  const user = await db.reads.prisma.user.findUnique({ where: { id: userId }, select: { id: true, instanceId: true, orgId: true, state: true } });
  if (user?.state !== "active") return null;
  const org = await db.reads.prisma.org.findUnique({ where: { id: user.orgId }, select: { state: true } });
  return org?.state === "active" ? { id: user.id, instanceId: user.instanceId, orgId: user.orgId } : null;
}

export interface MembershipRow {
  instanceId: string;
  contextType: string;
  contextId: string;
  roles: string[];
}

/** Reads of instances, organisations, tokens and memberships: the inputs of every request's tenancy and authorization. */
export class TenancyQueries {
  constructor(
    private readonly db: Database,
    private readonly cache: ProjectionCache,
  ) {}

  instanceByDomain(domain: string): Promise<InstanceRow | null> {
    const d = domain.toLowerCase();
    return this.cache.get(
      `instance-domain:${d}`,
      async () => {
        const row = await this.db.reads.prisma.instanceDomain.findUnique({ where: { domain: d } });
        return row ? this.instanceById(row.instanceId) : null;
      },
      readFrom("instanceDomain", "instance"),
    );
  }

  instanceById(id: string): Promise<InstanceRow | null> {
    return this.cache.get(
      `instance:${id}`,
      () =>
        this.db.reads.prisma.instance.findUnique({
          where: { id },
          select: { id: true, name: true, defaultOrgId: true, primaryDomain: true, blocked: true, auditLogRetentionS: true },
        }),
      readRow("instance", id),
    );
  }

  domainsOf(instanceId: string): Promise<string[]> {
    return this.cache.get(
      `instance-domains:${instanceId}`,
      async () => (await this.db.reads.prisma.instanceDomain.findMany({ where: { instanceId }, orderBy: { domain: "asc" } })).map((d) => d.domain),
      readRow("instanceDomain", instanceId),
    );
  }

  orgById(instanceId: string, id: string): Promise<OrgRow | null> {
    return this.cache.get(
      `org:${instanceId}:${id}`,
      () => this.db.reads.prisma.org.findFirst({ where: { instanceId, id }, select: { id: true, instanceId: true, name: true, primaryDomain: true } }),
      readRow("org", id),
    );
  }

  orgByDomain(instanceId: string, domain: string): Promise<OrgRow | null> {
    return this.cache.get(
      `org-domain:${instanceId}:${domain.toLowerCase()}`,
      async () => {
        // Any verified domain of the organisation names it (the primary one and those it validated).
        const d = await this.db.reads.prisma.orgDomain.findFirst({
          where: { instanceId, domain: domain.toLowerCase(), verified: true },
          select: { orgId: true },
        });
        if (!d) return null;
        return this.db.reads.prisma.org.findFirst({
          where: { instanceId, id: d.orgId },
          select: { id: true, instanceId: true, name: true, primaryDomain: true },
        });
      },
      readFrom("org", "orgDomain"),
    );
  }

  /**
   * The organisation an authorization request's scopes name (src/domain/org-scopes.ts): undefined when they name
   * none, null when the one they name is not an organisation of the instance.
   */
  async requestedOrg(instanceId: string, scopes: readonly string[]): Promise<OrgRow | null | undefined> {
    const wanted = requestedOrgOf(scopes);
    if (!wanted) return undefined;
    return "id" in wanted ? this.orgById(instanceId, wanted.id) : this.orgByDomain(instanceId, wanted.domain);
  }

  tokenOwner(tokenHash: string): Promise<TokenOwner | null> {
    return this.cache.get(
      `pat:${tokenHash}`,
      async () => {
        const pat = await this.db.reads.prisma.personalAccessToken.findUnique({ where: { tokenHash } });
        if (!pat) return null;
        const user = await usableUserOf(this.db, pat.userId);
        if (!user) return null;
        return { userId: pat.userId, instanceId: pat.instanceId, orgId: user.orgId, expiresAt: pat.expiresAt };
      },
      // The user's table lists the organisation's events too: a deactivated organisation drops the entry.
      readFrom("personalAccessToken", "user"),
    );
  }

  /**
   * `usableUserOf`, read once until the next event of the user or of any organisation (its row's sources name
   * the `org` type), so that a deactivation or removal takes effect at once, in this process and, on the
   * NOTIFY, in the others.
   */
  usableUser(userId: string): Promise<UsableUser | null> {
    return this.cache.get(`usable-user:${userId}`, () => usableUserOf(this.db, userId), readRow("user", userId));
  }

  membershipsOf(userId: string): Promise<MembershipRow[]> {
    return this.cache.get(
      `members:${userId}`,
      () => this.db.reads.prisma.membership.findMany({ where: { userId }, select: { instanceId: true, contextType: true, contextId: true, roles: true } }),
      readFrom("membership"),
    );
  }

  /** The organisation that owns a project or a project grant (null for another kind, or one that is gone). */
  async orgOfContext(contextType: string, contextId: string): Promise<string | null> {
    if (contextType === "project") return (await this.db.reads.prisma.project.findUnique({ where: { id: contextId }, select: { orgId: true } }))?.orgId ?? null;
    if (contextType === "project_grant")
      return (await this.db.reads.prisma.projectGrant.findUnique({ where: { id: contextId }, select: { orgId: true } }))?.orgId ?? null;
    return null;
  }
}
