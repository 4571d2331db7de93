/**
 * Every projection of the server, one module per table (ZITADEL's internal/query/projection): the server and
 * the bench seed register the same ones. query/sources.ts derives each table's cache sources from them.
 */
import type { EventStore } from "../eventstore/eventstore.js";
import { applications } from "./application.js";
import { applicationKeys } from "./application-key.js";
import { authRequests } from "./auth-request.js";
import { brandingAssets } from "./branding-asset.js";
import { instanceCascade } from "./cascade.js";
import { executions } from "./execution.js";
import { idps } from "./idp.js";
import { idpPolicies } from "./idp-policy.js";
import { instances } from "./instance.js";
import { instanceDomains } from "./instance-domain.js";
import { loginSessions } from "./login-session.js";
import { machineKeys } from "./machine-key.js";
import { memberships } from "./membership.js";
import { notificationProviders } from "./notification-provider.js";
import { orgs } from "./org.js";
import { orgDomains } from "./org-domain.js";
import { personalAccessTokens } from "./personal-access-token.js";
import { projects } from "./project.js";
import { projectGrants } from "./project-grant.js";
import { projectRoles } from "./project-role.js";
import { refreshTokens } from "./refresh-token.js";
import { revokedTokens } from "./revoked-token.js";
import { settings } from "./setting.js";
import { signingKeys } from "./signing-key.js";
import { targets } from "./target.js";
import { temporaryLockouts } from "./temporary-lockout.js";
import { userCodes } from "./user-code.js";
import { userGrants } from "./user-grant.js";
import { userIdpLinks } from "./user-idp-link.js";
import { userMetadata } from "./user-metadata.js";
import { userMfaInitSkips } from "./user-mfa-init-skip.js";
import { userOtpChannels } from "./user-otp-channel.js";
import { users } from "./user.js";
import { userSchemas } from "./user-schema.js";
import { userTotps } from "./user-totp.js";
import { userWebauthnKeys } from "./user-webauthn-key.js";

export { instanceCascade } from "./cascade.js";
export type { Handler, Projection, TableName } from "./projection.js";

/**
 * The projections, in the order an event's handlers run. The tables are independent (no foreign keys) but for
 * one thing: some handlers find their rows through rows of other tables that the same event removes, so they
 * come before those tables' projections. On `org.org.removed` the organisation's users (read by the tables of
 * per-user rows, memberships and user grants), its projects (read by memberships, roles, grants, applications
 * and their keys) and their applications (read by application keys); on `project.project.removed` its
 * applications (application keys) and grants (memberships); on `project.grant.removed` the grant (user grants).
 */
export const allProjections = [
  // Readers of users, projects, applications and project grants.
  memberships,
  userGrants,
  machineKeys,
  personalAccessTokens,
  loginSessions,
  userTotps,
  userMfaInitSkips,
  userWebauthnKeys,
  userCodes,
  userOtpChannels,
  userIdpLinks,
  userMetadata,
  applicationKeys,
  // Readers of projects.
  applications,
  projectRoles,
  projectGrants,
  // Read by the above.
  projects,
  users,
  // Independent of the others.
  temporaryLockouts,
  userSchemas,
  instances,
  instanceDomains,
  orgs,
  orgDomains,
  brandingAssets,
  authRequests,
  refreshTokens,
  revokedTokens,
  signingKeys,
  settings,
  targets,
  executions,
  idps,
  idpPolicies,
  notificationProviders,
] as const;

/** The projection tables. */
export type ProjectionTable = (typeof allProjections)[number]["table"];

/**
 * The other tables each projection's handlers read (related.ts, and the grants a user grant or membership
 * follows): a rebuild replays these with the reader, so that each handler reads them as they were at its event
 * (test/platform/cache-sources.test.ts checks this list against what the handlers read).
 */
export const projectionReads: Partial<Record<ProjectionTable, readonly ProjectionTable[]>> = {
  applicationKey: ["application", "project"],
  application: ["project"],
  loginSession: ["user"],
  machineKey: ["user"],
  membership: ["project", "projectGrant", "user"],
  personalAccessToken: ["user"],
  projectGrant: ["project"],
  projectRole: ["project"],
  userCode: ["user"],
  userGrant: ["projectGrant", "user"],
  userIdpLink: ["user"],
  userMetadata: ["user"],
  userOtpChannel: ["user"],
  userTotp: ["user"],
  userWebauthnKey: ["user"],
};

/** The projections a rebuild of `tables` replays: those and every table they read, transitively, in handler order. */
export function rebuildSet(tables: readonly ProjectionTable[]): (typeof allProjections)[number][] {
  const wanted = new Set<ProjectionTable>();
  const add = (t: ProjectionTable) => {
    if (wanted.has(t)) return;
    wanted.add(t);
    for (const r of projectionReads[t] ?? []) add(r);
  };
  for (const t of tables) add(t);
  return allProjections.filter((p) => wanted.has(p.table));
}

/** Registers every projection's handlers, and the instance's cascade, with the event store (at start-up). */
export function registerProjections(es: EventStore): void {
  for (const h of instanceCascade.handlers) es.on(h.event, h.reduce);
  for (const p of allProjections) for (const h of p.handlers) es.on(h.event, h.reduce);
}
