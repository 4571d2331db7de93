import type { Prisma as P, User, UserSchema } from "../../gen/prisma/client.js";
import { inheritanceChain } from "../domain/contexts.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import type { SettingsQueries } from "./settings.js";
import { readRow, tableSources } from "./sources.js";
import { readableWhere, search, textFilter, type ListWindow, type ReadScope, type SearchRequest, type Searchable, type TextCriterion } from "./list.js";

export type UserRow = User;

/**
 * The columns a user's answer shows (`toGetUser`): not the password hash, the failure count or the login
 * name. The secret hash only tells whether a machine has a secret.
 */
const userColumns = {
  id: true,
  orgId: true,
  username: true,
  kind: true,
  state: true,
  displayName: true,
  givenName: true,
  familyName: true,
  nickName: true,
  preferredLanguage: true,
  email: true,
  emailVerified: true,
  phone: true,
  phoneVerified: true,
  passwordChangeRequired: true,
  passwordChanged: true,
  description: true,
  accessTokenType: true,
  secretHash: true,
  schemaId: true,
  schemaRevision: true,
  data: true,
  sequence: true,
  changeDate: true,
} satisfies P.UserSelect;

/** A user as searches return it. */
export type UserView = P.UserGetPayload<{ select: typeof userColumns }>;

/** The states of a user as the projection stores them. */
export type UserStateName = "active" | "inactive" | "locked" | "initial";

/** What a user search filters by; the state "" (one the API does not name) matches no user. */
export type UserFilter =
  | { case: "inIds"; value: string[] }
  | { case: "username"; value: TextCriterion }
  | { case: "displayName"; value: TextCriterion }
  | { case: "email"; value: TextCriterion }
  | { case: "state"; value: UserStateName | "" }
  | { case: "type"; value: "human" | "machine" }
  | { case: "organizationId"; value: string };

export type UserSort = "id" | "creationDate" | "changeDate" | "username" | "displayName" | "email" | "state" | "type";

const users: Searchable<UserFilter, P.UserWhereInput, P.UserOrderByWithRelationInput, UserView, UserSort> = {
  table: "user",
  sources: tableSources.user,
  filters: {
    inIds: (ids) => ({ id: { in: ids } }),
    username: (v) => ({ username: textFilter(v) }),
    displayName: (v) => ({ displayName: textFilter(v) }),
    email: (v) => ({ email: textFilter(v) }),
    state: (state) => ({ state }),
    type: (kind) => ({ kind }),
    organizationId: (orgId) => ({ orgId }),
  },
  sortColumns: {
    id: "id",
    creationDate: "createdAt",
    changeDate: "changeDate",
    username: "loginName",
    displayName: "displayName",
    email: "email",
    state: "state",
    type: "kind",
  },
  defaultSort: "createdAt",
  tieBreaker: ["id"],
  // Login names are unique in an instance too: no tie-breaker, so that the (instance, login name) index serves the sort.
  unique: ["id", "loginName"],
  select: userColumns,
};

/**
 * The user a login name names in the instance: the username itself (unique in the instance regardless of case),
 * else `<username>@<domain>` where the domain is a verified domain of the user's organisation (as ZITADEL resolves
 * login names). The part before the last `@` is the username, so a username that is itself an e-mail address
 * works in both forms. With `signIn` (the sign-in paths' settings), the bare username does not name a user whose
 * organisation's domain settings ask for the domain (user_login_must_be_domain); the operator's recovery tool
 * passes none and finds the user either way.
 */
export async function userByLoginName(db: Database, instanceId: string, loginName: string, signIn?: SettingsQueries): Promise<UserRow | null> {
  const name = loginName.trim().toLowerCase();
  if (!name) return null;
  const byUsername = (username: string) => db.reads.prisma.user.findUnique({ where: { instanceId_loginName: { instanceId, loginName: username } } });
  const at = name.lastIndexOf("@");
  const domain = at > 0 && at < name.length - 1 ? name.slice(at + 1) : undefined;
  const domainOwner = domain ? await db.reads.prisma.orgDomain.findFirst({ where: { instanceId, domain, verified: true }, select: { orgId: true } }) : null;
  const exact = await byUsername(name);
  // A username `…@<domain>` of a user outside the organisation that verified the domain never names anybody
  // (security review, finding 12: one taken before the check existed must not win over the real user).
  if (exact && (!domainOwner || domainOwner.orgId === exact.orgId)) {
    const chain = inheritanceChain({ type: "org", instanceId, orgId: exact.orgId });
    if (!signIn || !(await signIn.values("domain", chain)).user_login_must_be_domain) return exact;
  }
  if (!domainOwner) return null;
  const user = await byUsername(name.slice(0, at));
  return user?.orgId === domainOwner.orgId ? user : null;
}

/** Reads of users and their machine credentials. */
export class UserQueries {
  constructor(
    private readonly db: Database,
    private readonly cache: ProjectionCache,
  ) {}

  /** The user, when it belongs to the instance. */
  async byId(instanceId: string, id: string): Promise<UserRow | null> {
    const user = await this.db.reads.prisma.user.findUnique({ where: { id } });
    return user?.instanceId === instanceId ? user : null;
  }

  /** The user linked to an account at an identity provider, when it belongs to the instance. */
  async byExternalAccount(instanceId: string, idpId: string, externalUserId: string): Promise<UserRow | null> {
    const link = await this.db.reads.prisma.userIdpLink.findUnique({ where: { idpId_externalUserId: { idpId, externalUserId } }, select: { userId: true } });
    return link ? this.byId(instanceId, link.userId) : null;
  }

  /** Whether the user is linked to an account of the provider (one link per user and provider). */
  async linkedToProvider(userId: string, idpId: string): Promise<boolean> {
    return (await this.db.reads.prisma.userIdpLink.count({ where: { userId, idpId } })) > 0;
  }

  /** Whether the account at the provider is linked to any user (a system provider's: in any instance). */
  async externalAccountLinked(idpId: string, externalUserId: string): Promise<boolean> {
    return (await this.db.reads.prisma.userIdpLink.count({ where: { idpId, externalUserId } })) > 0;
  }

  /**
   * The humans of the instance (of `orgId` when given) whose e-mail address is `email` and verified here, at most
   * two: auto-linking by e-mail links only when exactly one matches.
   */
  withVerifiedEmail(instanceId: string, email: string, orgId?: string): Promise<UserRow[]> {
    return this.db.reads.prisma.user.findMany({
      where: { instanceId, kind: "human", email: { equals: email, mode: "insensitive" }, emailVerified: true, ...(orgId ? { orgId } : {}) },
      take: 2,
    });
  }

  /**
   * The user a token is about, read once until the next committed event: every access token check, userinfo
   * and introspection read it. Not scoped to an instance: the token's own claims are checked against it.
   */
  tokenSubject(id: string): Promise<UserRow | null> {
    return this.cache.get(`oidc-user:${id}`, () => this.db.reads.prisma.user.findUnique({ where: { id } }), readRow("user", id));
  }

  /** The user's metadata, by key (the claim of the scope urn:svc:iam:user:metadata). */
  metadataOf(userId: string): Promise<{ key: string; value: Uint8Array }[]> {
    return this.cache.get(
      `user-metadata:${userId}`,
      () => this.db.reads.prisma.userMetadata.findMany({ where: { userId }, orderBy: { key: "asc" }, select: { key: true, value: true } }),
      readRow("user", userId),
    );
  }

  search(instanceId: string, readable: ReadScope, req: SearchRequest<UserFilter, UserSort>, window: ListWindow) {
    return search(this.db, this.cache, users, [{ instanceId }, readableWhere(readable, "orgId")], req, window);
  }

  /** A machine user's keys and personal access tokens, oldest first: what describes them, not the public key or token hash. */
  /** The ways of signing in a user has set up (src/api/user/service.ts names them). */
  async authenticationMethods(user: { id: string; passwordHash: string | null }) {
    const where = { where: { userId: user.id } };
    const [totp, keys, channels, links] = await Promise.all([
      this.db.reads.prisma.userTotp.findFirst({ where: { userId: user.id, verified: true }, select: { userId: true } }),
      this.db.reads.prisma.userWebauthnKey.findMany({ ...where, select: { passwordless: true } }),
      this.db.reads.prisma.userOtpChannel.findMany({ ...where, select: { channel: true } }),
      this.db.reads.prisma.userIdpLink.count(where),
    ]);
    return {
      password: user.passwordHash !== null,
      passkey: keys.some((k) => k.passwordless),
      idp: links > 0,
      totp: totp !== null,
      u2f: keys.some((k) => !k.passwordless),
      otpSms: channels.some((c) => c.channel === "sms"),
      otpEmail: channels.some((c) => c.channel === "email"),
    };
  }

  async machineCredentials(userId: string) {
    const args = { where: { userId }, orderBy: { createdAt: "asc" as const }, select: { id: true, createdAt: true, expiresAt: true } };
    const [keys, pats] = await Promise.all([this.db.reads.prisma.machineKey.findMany(args), this.db.reads.prisma.personalAccessToken.findMany(args)]);
    return { keys, pats };
  }
}

/** What a user schema search filters by. */
export type UserSchemaFilter = { case: "inIds"; value: string[] } | { case: "type"; value: string } | { case: "state"; value: "active" | "inactive" };

const userSchemas: Searchable<UserSchemaFilter, P.UserSchemaWhereInput, P.UserSchemaOrderByWithRelationInput, UserSchema> = {
  table: "userSchema",
  sources: tableSources.userSchema,
  filters: {
    inIds: (ids) => ({ id: { in: ids } }),
    type: (type) => ({ type }),
    state: (state) => ({ state }),
  },
  defaultSort: "createdAt",
  tieBreaker: ["id"],
};

/** Reads of user schemas (instance-wide). */
export class UserSchemaQueries {
  constructor(
    private readonly db: Database,
    private readonly cache: ProjectionCache,
  ) {}

  byId(instanceId: string, id: string): Promise<UserSchema | null> {
    return this.db.reads.prisma.userSchema.findFirst({ where: { id, instanceId } });
  }

  search(instanceId: string, req: SearchRequest<UserSchemaFilter>, window: ListWindow) {
    return search(this.db, this.cache, userSchemas, [{ instanceId }], req, window);
  }
}

/** Whether the user must change its password before signing in, read fresh: a sign-in decides on it. */
export async function mustChangePassword(db: Database, userId: string): Promise<boolean> {
  const user = await db.reads.prisma.user.findUnique({ where: { id: userId }, select: { passwordChangeRequired: true } });
  return !!user?.passwordChangeRequired;
}
