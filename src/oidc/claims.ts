import type { User } from "../../gen/prisma/client.js";
import type { UserGrantQueries } from "../query/user-grants.js";
import type { TenancyQueries } from "../query/tenancy.js";
import type { UserQueries } from "../query/users.js";
import { ORG_DOMAIN_CLAIM, ORG_ID_CLAIM } from "../domain/org-scopes.js";
import { METADATA_SCOPE, ROLES_SCOPE } from "./scopes.js";

/** The claims of a user per scope (OIDC Core §5.4): profile, email, phone (no `address`: see `standardScopes`). */
export function userClaims(user: User, scopes: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (scopes.includes("profile")) {
    Object.assign(out, {
      name: user.displayName,
      preferred_username: user.username,
      updated_at: Math.floor(user.changeDate.getTime() / 1000),
      ...(user.kind === "human"
        ? {
            given_name: user.givenName ?? undefined,
            family_name: user.familyName ?? undefined,
            ...(user.nickName ? { nickname: user.nickName } : {}),
            ...(user.preferredLanguage ? { locale: user.preferredLanguage } : {}),
          }
        : {}),
    });
  }
  if (scopes.includes("email") && user.email) Object.assign(out, { email: user.email, email_verified: user.emailVerified });
  if (scopes.includes("phone") && user.phone) Object.assign(out, { phone_number: user.phone, phone_number_verified: user.phoneVerified });
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined));
}

/**
 * The user's roles of a project, as `{"<role>": {"<org id>": "<org primary domain>"}}` under
 * `urn:svc:iam:org:project:roles`, when the scope asks for them or the project asserts them.
 */
export async function roleClaims(
  userGrants: UserGrantQueries,
  userId: string,
  projectId: string | undefined,
  scopes: string[],
  assert: boolean,
): Promise<Record<string, unknown>> {
  if (!projectId || (!assert && !scopes.includes(ROLES_SCOPE))) return {};
  const grant = await userGrants.rolesOn(userId, projectId);
  if (!grant?.roleKeys.length) return {};
  const roles = Object.fromEntries(grant.roleKeys.map((k) => [k, { [grant.orgId]: grant.orgDomain }]));
  return { [ROLES_SCOPE]: roles, [`urn:svc:iam:org:project:${projectId}:roles`]: roles };
}

/** The user's metadata as `{"<key>": "<base64url of the value>"}` under the scope's name, when the scope asks for it and there is some. */
export async function metadataClaims(users: UserQueries, userId: string, scopes: string[]): Promise<Record<string, unknown>> {
  if (!scopes.includes(METADATA_SCOPE)) return {};
  const entries = await users.metadataOf(userId);
  if (!entries.length) return {};
  return { [METADATA_SCOPE]: Object.fromEntries(entries.map((e) => [e.key, Buffer.from(e.value).toString("base64url")])) };
}

/**
 * The claims of the organisation scopes (src/domain/org-scopes.ts): its ID and primary domain, when the scope names
 * the user's organisation (the login lets no one else sign in; a token of another flow simply gets no claim).
 */
export async function orgClaims(tenancy: TenancyQueries, user: User, scopes: string[]): Promise<Record<string, unknown>> {
  const named = await tenancy.requestedOrg(user.instanceId, scopes);
  if (!named || named.id !== user.orgId) return {};
  return { [ORG_ID_CLAIM]: named.id, [ORG_DOMAIN_CLAIM]: named.primaryDomain };
}

/** The claims of the scopes beyond the standard ones that depend on the user: metadata and organisation. */
export async function extraScopeClaims(deps: { users: UserQueries; tenancy: TenancyQueries }, user: User, scopes: string[]) {
  return { ...(await metadataClaims(deps.users, user.id, scopes)), ...(await orgClaims(deps.tenancy, user, scopes)) };
}
