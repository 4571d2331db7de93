import type { Database } from "../storage/database.js";

/**
 * What an export reads of an organisation: its rows in the projections, whole (secrets included: the export
 * leaves them out, see src/api/portability/export.ts). Users come in pages, so that an export of many users
 * streams instead of loading them all.
 */
export class ExportQueries {
  constructor(private readonly db: Database) {}

  /** The instance's organisations in `orgIds` (all when empty) minus `excluded`, oldest first. */
  orgs(instanceId: string, orgIds: string[], excluded: string[]) {
    return this.db.prisma.org.findMany({
      where: { instanceId, ...(orgIds.length ? { id: { in: orgIds } } : {}), NOT: { id: { in: excluded } } },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    });
  }

  /** The organisation's domains, the generated one first. */
  domains(orgId: string) {
    return this.db.prisma.orgDomain.findMany({ where: { orgId }, orderBy: [{ generated: "desc" }, { createdAt: "asc" }, { domain: "asc" }] });
  }

  /** A page of an organisation's users of one kind after `afterId`, by ID. */
  users(orgId: string, kind: "human" | "machine", afterId: string, take: number) {
    return this.db.prisma.user.findMany({ where: { orgId, kind, ...(afterId ? { id: { gt: afterId } } : {}) }, orderBy: { id: "asc" }, take });
  }

  /** The verified authenticators of these users (sealed secrets). */
  totps(userIds: string[]) {
    return this.db.prisma.userTotp.findMany({ where: { userId: { in: userIds }, verified: true } });
  }

  projects(orgId: string) {
    return this.db.prisma.project.findMany({ where: { orgId }, orderBy: { id: "asc" } });
  }

  roles(projectIds: string[]) {
    return this.db.prisma.projectRole.findMany({ where: { projectId: { in: projectIds } }, orderBy: [{ projectId: "asc" }, { createdAt: "asc" }] });
  }

  applications(orgId: string) {
    return this.db.prisma.application.findMany({ where: { orgId }, orderBy: { id: "asc" } });
  }

  userGrants(orgId: string) {
    return this.db.prisma.userGrant.findMany({ where: { orgId }, orderBy: { id: "asc" } });
  }

  /** The organisation's projects granted to other organisations. */
  projectGrants(projectIds: string[]) {
    return this.db.prisma.projectGrant.findMany({ where: { projectId: { in: projectIds } }, orderBy: { id: "asc" } });
  }

  /** Memberships in the organisation, in its projects and in their grants. */
  members(orgId: string, projectIds: string[], grantIds: string[]) {
    return this.db.prisma.membership.findMany({
      where: {
        OR: [
          { contextType: "org", contextId: orgId },
          { contextType: "project", contextId: { in: projectIds } },
          { contextType: "project_grant", contextId: { in: grantIds } },
        ],
      },
      orderBy: [{ contextType: "asc" }, { contextId: "asc" }, { userId: "asc" }],
    });
  }

  /** The organisation's own identity providers (client secrets are in the row: the export leaves them out). */
  idps(orgId: string) {
    return this.db.prisma.idp.findMany({ where: { ownerType: "org", ownerId: orgId }, orderBy: { id: "asc" } });
  }

  /** The links of the organisation's users to accounts at identity providers. */
  userMetadata(orgId: string) {
    return this.db.prisma.userMetadata.findMany({ where: { orgId }, orderBy: [{ userId: "asc" }, { key: "asc" }] });
  }

  userLinks(orgId: string) {
    return this.db.prisma.userIdpLink.findMany({ where: { orgId }, orderBy: [{ userId: "asc" }, { idpId: "asc" }] });
  }

  /** The organisation's own settings of these kinds (what it set itself, not what it inherits). */
  settings(orgId: string, kinds: string[]) {
    return this.db.prisma.setting.findMany({ where: { ownerType: "org", ownerId: orgId, kind: { in: kinds } } });
  }
}
