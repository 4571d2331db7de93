/**
 * Every event the server writes, each defined once: type, aggregate type and payload. docs/events.md
 * describes them; `index.ts` lists them. Payloads are JSON (see `aggregateType`); changing a field here
 * changes what is stored, so old events keep the old names: add fields, do not rename them.
 */
import type { ApiConfig, OidcConfig } from "../domain/applications.js";
import type { ContextType } from "../domain/contexts.js";
import type { IdpConfig, Policy } from "../domain/idps.js";
import type { ProviderFields } from "../domain/notification-providers.js";
import type { ProjectConfig, RoleConfig } from "../domain/projects.js";
import type { TargetConfig } from "../domain/targets.js";
import { aggregateType } from "../eventstore/definition.js";

export type { ContextType };

// The aggregate types; each event belongs to one.
const system = aggregateType("system");
const instance = aggregateType("instance");
const org = aggregateType("org");
const user = aggregateType("user");
const project = aggregateType("project");
const application = aggregateType("application");
const userGrant = aggregateType("usergrant");
const signingKeys = aggregateType("signing_keys");
const authRequest = aggregateType("auth_request");
const refreshToken = aggregateType("refresh_token");
const oidcToken = aggregateType("oidc_token");
const session = aggregateType("session");
const settings = aggregateType("settings");
const target = aggregateType("target");
const execution = aggregateType("execution");
const idp = aggregateType("idp");
const notificationProvider = aggregateType("notification_provider");
const notificationMessage = aggregateType("notification_message");
const brandingAsset = aggregateType("branding_asset");
const userSchema = aggregateType("user_schema");
const projectGrant = aggregateType("project_grant");

// Instances and organisations

export const instanceAdded = instance.defineEvent<{ name: string }>("instance.instance.added");
export const instanceDomainAdded = instance.defineEvent<{ domain: string }>("instance.domain.added");
export const instanceDomainRemoved = instance.defineEvent<{ domain: string }>("instance.domain.removed");
/** One of its domains becomes the one mail links and new organisations' generated domains use. */
export const instanceDomainPrimarySet = instance.defineEvent<{ domain: string }>("instance.domain.primary.set");
export const instanceChanged = instance.defineEvent<{ name: string }>("instance.instance.changed");
/** The instance and every projection row of it go; its events stay in the log. */
export const instanceRemoved = instance.defineEvent("instance.instance.removed");
/** Limits set by the system API: a property present changed (`auditLogRetentionS` null: no retention). */
export const instanceLimitsSet = instance.defineEvent<{ block?: boolean; auditLogRetentionS?: number | null }>("instance.limits.set");
export const instanceDefaultOrgSet = instance.defineEvent<{ orgId: string }>("instance.default_org.set");

export type OrgFields = { name: string; primaryDomain: string };
export const orgAdded = org.defineEvent<OrgFields>("org.org.added");
/** A rename; written before organisations had domains, it carried the new generated domain as `primaryDomain`. */
export const orgChanged = org.defineEvent<{ name: string; primaryDomain?: string }>("org.org.changed");
export const orgDeactivated = org.defineEvent("org.org.deactivated");
export const orgReactivated = org.defineEvent("org.org.reactivated");
/** The organisation's users, their credentials and memberships, and its projects go with it. */
export const orgRemoved = org.defineEvent("org.org.removed");

// An organisation's domains (src/command/org-domains.ts). The generated domain follows the name: its events
// are these too, with `generated`.
export type OrgDomainRef = { domain: string };
export const orgDomainAdded = org.defineEvent<OrgDomainRef & { verified: boolean; generated?: boolean }>("org.domain.added");
/** A token to publish (a file under /.well-known/ or a TXT record), replacing the one before. */
export const orgDomainValidationAdded = org.defineEvent<OrgDomainRef & { validationType: "http" | "dns"; token: string }>("org.domain.validation.added");
export const orgDomainValidationFailed = org.defineEvent<OrgDomainRef & { reason: string }>("org.domain.validation.failed");
export const orgDomainVerified = org.defineEvent<OrgDomainRef>("org.domain.verified");
export const orgDomainPrimarySet = org.defineEvent<OrgDomainRef>("org.domain.primary.set");
export const orgDomainRemoved = org.defineEvent<OrgDomainRef>("org.domain.removed");

// Memberships: the member events of a context belong to the context's aggregate.

/** A membership's roles: all of them, on every change. */
export type MemberRoles = { userId: string; roles: string[] };
export type MemberRemoved = { userId: string };
export const systemMemberAdded = system.defineEvent<MemberRoles>("system.member.added");
export const systemMemberChanged = system.defineEvent<MemberRoles>("system.member.changed");
export const systemMemberRemoved = system.defineEvent<MemberRemoved>("system.member.removed");
export const instanceMemberAdded = instance.defineEvent<MemberRoles>("instance.member.added");
export const instanceMemberChanged = instance.defineEvent<MemberRoles>("instance.member.changed");
export const instanceMemberRemoved = instance.defineEvent<MemberRemoved>("instance.member.removed");
export const orgMemberAdded = org.defineEvent<MemberRoles>("org.member.added");
export const orgMemberChanged = org.defineEvent<MemberRoles>("org.member.changed");
export const orgMemberRemoved = org.defineEvent<MemberRemoved>("org.member.removed");
export const projectMemberAdded = project.defineEvent<MemberRoles>("project.member.added");
export const projectMemberChanged = project.defineEvent<MemberRoles>("project.member.changed");
export const projectMemberRemoved = project.defineEvent<MemberRemoved>("project.member.removed");
/** Members of a project grant: an aggregate per grant (its ID), so that they change without locking the project. */
export const projectGrantMemberAdded = projectGrant.defineEvent<MemberRoles>("project_grant.member.added");
export const projectGrantMemberChanged = projectGrant.defineEvent<MemberRoles>("project_grant.member.changed");
export const projectGrantMemberRemoved = projectGrant.defineEvent<MemberRemoved>("project_grant.member.removed");

// Users and their credentials

/** An RFC 8693 §4.1 actor claim: who acts (`sub`, at `iss`), and for a chain of actors the one before (`act`). */
export type ActorClaim = { iss: string; sub: string; act?: ActorClaim };

/** The first instance's admin and imported users may come with only some of the profile. */
export type HumanAdded = {
  username: string;
  displayName: string;
  givenName?: string;
  familyName?: string;
  nickName?: string;
  preferredLanguage?: string;
  email?: string;
  emailVerified?: boolean;
  phone?: string;
  phoneVerified?: boolean;
  /** null: the user has no password yet (state initial). */
  passwordHash?: string | null;
  passwordChangeRequired?: boolean;
};
export type MachineAdded = { username: string; displayName: string; description?: string; accessTokenType?: "opaque" | "jwt" };
/** The changed fields only, of either kind of user. */
export type UserChanges = Partial<{
  username: string;
  displayName: string;
  givenName: string;
  familyName: string;
  nickName: string;
  preferredLanguage: string;
  email: string;
  emailVerified: boolean;
  phone: string | null;
  phoneVerified: boolean;
  description: string;
  accessTokenType: "opaque" | "jwt";
}>;
/** A public key (SPKI PEM) of a machine user or an application; its private half was handed out once. */
export type KeyAdded = { keyId: string; publicKey: string; expiresAt: string | null };

export const humanAdded = user.defineEvent<HumanAdded>("user.human.added");
export const humanChanged = user.defineEvent<UserChanges>("user.human.changed");
export const machineAdded = user.defineEvent<MachineAdded>("user.machine.added");
export const machineChanged = user.defineEvent<UserChanges>("user.machine.changed");
/**
 * Another organisation verified the domain this user's username ended in: the username becomes `username`
 * (`<user ID>@temporary.<instance domain>`) and the user is told by mail (ZITADEL's "domain claimed").
 */
/** A wrong code of `kind` was given; the code is spent at the limit of wrong tries (src/command/user-codes.ts). */
export const userCodeFailed = user.defineEvent<{ kind: string }>("user.code.failed");
export const userDomainClaimed = user.defineEvent<{ username: string; domain: string }>("user.domain.claimed");
/** By an administrator, or after too many failed password checks (then with a reason). */
export const userLocked = user.defineEvent<{ reason?: string; until?: string }>("user.user.locked");
export const userUnlocked = user.defineEvent("user.user.unlocked");
export const userDeactivated = user.defineEvent("user.user.deactivated");
export const userReactivated = user.defineEvent("user.user.reactivated");
export const userRemoved = user.defineEvent("user.user.removed");
/** `rehashed`: a login stored a stronger hash of the same password. */
export const passwordChanged = user.defineEvent<{ passwordHash: string; changeRequired: boolean; rehashed?: boolean }>("user.password.changed");
export const passwordCheckSucceeded = user.defineEvent("user.password.check_succeeded");
export const passwordCheckFailed = user.defineEvent("user.password.check_failed");
export const secretSet = user.defineEvent<{ secretHash: string }>("user.secret.set");
export const secretRemoved = user.defineEvent("user.secret.removed");
export const keyAdded = user.defineEvent<KeyAdded>("user.key.added");
export const keyRemoved = user.defineEvent<{ keyId: string }>("user.key.removed");
export const patAdded = user.defineEvent<{ tokenId: string; tokenHash: string; expiresAt: string | null }>("user.pat.added");
export const patRemoved = user.defineEvent<{ tokenId: string }>("user.pat.removed");
/**
 * A token exchange issued tokens for the user to someone acting for them (RFC 8693): `act` is the actor claim the
 * tokens carry (`sub` the actor's user ID, `iss`, and a nested `act` for the actor's own actor), `clientId` the
 * client that asked. The event's creator is the actor.
 */
/** A TOTP authenticator added (`secret`: the base32 secret sealed with the master key), not usable until verified. */
export const totpAdded = user.defineEvent<{ secret: string }>("user.totp.added");
export const totpVerified = user.defineEvent("user.totp.verified");
export const totpRemoved = user.defineEvent("user.totp.removed");
/** A wrong code at sign-in: counts toward the lockout (its own count, at the same limit as wrong passwords). */
export const totpCheckFailed = user.defineEvent("user.totp.check_failed");
/** A right code at sign-in after failures: the code's failure count starts again. */
export const totpCheckSucceeded = user.defineEvent("user.totp.check_succeeded");
/**
 * A WebAuthn credential registered after its attestation was verified: a security key (second factor) or a
 * passkey (`passwordless`, discoverable, user verification). `publicKey` is the COSE key, base64url.
 */
export const webauthnKeyAdded = user.defineEvent<{
  keyId: string;
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: string[];
  name: string;
  passwordless: boolean;
}>("user.webauthn.added");
/** A credential signed a login: its new signature counter. */
export const webauthnKeyUsed = user.defineEvent<{ keyId: string; counter: number }>("user.webauthn.used");
export const webauthnKeyRemoved = user.defineEvent<{ keyId: string }>("user.webauthn.removed");
/** The user put off setting up a second factor (login settings mfa_init_skip_lifetime); the time is the event's. */
export const mfaInitSkipped = user.defineEvent("user.mfa_init.skipped");
export const userImpersonated = user.defineEvent<{ act: ActorClaim; clientId: string }>("user.impersonated");
/** A link to the user's account at an identity provider (imported: the user import's `idps`, the data import's `userLinks`). */
export const idpLinkAdded = user.defineEvent<{ idpId: string; externalUserId: string; displayName: string }>("user.idp_link.added");
export const idpLinkRemoved = user.defineEvent<{ idpId: string; externalUserId: string }>("user.idp_link.removed");
/** A sign-in through an identity provider: which one and which account there (never a token of the provider). */
export const idpLoginSucceeded = user.defineEvent<{ idpId: string; externalUserId: string }>("user.idp_login.succeeded");
/** A metadata entry set (`value`: the bytes, base64) or removed. */
export const userMetadataSet = user.defineEvent<{ key: string; value: string }>("user.metadata.set");
export const userMetadataRemoved = user.defineEvent<{ key: string }>("user.metadata.removed");

// Projects, applications, user grants

export const projectAdded = project.defineEvent<ProjectConfig>("project.project.added");
export const projectChanged = project.defineEvent<Partial<ProjectConfig>>("project.project.changed");
export const projectDeactivated = project.defineEvent("project.project.deactivated");
export const projectReactivated = project.defineEvent("project.project.reactivated");
export const projectRemoved = project.defineEvent("project.project.removed");
export const projectRoleAdded = project.defineEvent<RoleConfig>("project.role.added");
export const projectRoleChanged = project.defineEvent<Pick<RoleConfig, "key"> & Partial<Omit<RoleConfig, "key">>>("project.role.changed");
export const projectRoleRemoved = project.defineEvent<{ key: string }>("project.role.removed");
/** The project granted to another organisation with some of its roles (the event is the project's: grants follow its roles). */
export const projectGrantAdded = project.defineEvent<{ grantId: string; grantedOrgId: string; roleKeys: string[] }>("project.grant.added");
/** Keys left out leave the granted organisation's user grants on the project too. */
export const projectGrantChanged = project.defineEvent<{ grantId: string; roleKeys: string[] }>("project.grant.changed");
export const projectGrantDeactivated = project.defineEvent<{ grantId: string }>("project.grant.deactivated");
export const projectGrantReactivated = project.defineEvent<{ grantId: string }>("project.grant.reactivated");
/** The granted organisation's user grants on the project go with it. */
export const projectGrantRemoved = project.defineEvent<{ grantId: string }>("project.grant.removed");

export type AppAdded<C> = { projectId: string; name: string; clientId: string; config: C; secretHash: string | null };
export const oidcAppAdded = application.defineEvent<AppAdded<OidcConfig>>("application.oidc.added");
export const apiAppAdded = application.defineEvent<AppAdded<ApiConfig>>("application.api.added");
/** `config`: the whole new configuration. */
export const appChanged = application.defineEvent<{ name?: string; config?: OidcConfig | ApiConfig }>("application.application.changed");
export const appDeactivated = application.defineEvent("application.application.deactivated");
export const appReactivated = application.defineEvent("application.application.reactivated");
export const appRemoved = application.defineEvent("application.application.removed");
export const appSecretSet = application.defineEvent<{ secretHash: string }>("application.secret.set");
export const appKeyAdded = application.defineEvent<KeyAdded>("application.key.added");
export const appKeyRemoved = application.defineEvent<{ keyId: string }>("application.key.removed");

export const userGrantAdded = userGrant.defineEvent<{ userId: string; projectId: string; roleKeys: string[] }>("usergrant.grant.added");
export const userGrantChanged = userGrant.defineEvent<{ roleKeys: string[] }>("usergrant.grant.changed");
export const userGrantRemoved = userGrant.defineEvent("usergrant.grant.removed");

// The OIDC provider and browser sessions

export const signingKeyAdded = signingKeys.defineEvent<{
  kid: string;
  algorithm: "RS256";
  /** Encrypted with the master key. */
  privateKey: string;
  /** The public key as a JWK, as node:crypto exports it, with kid, alg and use. */
  publicJwk: object;
  useUntil: string;
  publishUntil: string;
}>("oidc.signing_key.added");

/** `request`: the validated authorization request (`ValidatedRequest` of oidc/authorize.ts). */
export const authRequestAdded = authRequest.defineEvent<{ clientId: string; request: object; expiresAt: string }>("oidc.auth_request.added");
export const authRequestSucceeded = authRequest.defineEvent<{
  userId: string;
  sessionId: string;
  authTime: string;
  codeHash: string | null;
  expiresAt: string;
  /** The session's authentication methods at the time (absent in older events: a password). */
  amr?: string[];
}>("oidc.auth_request.succeeded");
export const authRequestCodeExchanged = authRequest.defineEvent("oidc.auth_request.code_exchanged");
/** What the code gave, revoked if the code is used again. */
export type IssuedByCode = { accessJti: string; accessExp: number; refreshId?: string };
export const authRequestTokensIssued = authRequest.defineEvent<{ issued: IssuedByCode }>("oidc.auth_request.tokens_issued");

/** What every rotation of a refresh token renews. */
export type RefreshRotation = { tokenHash: string; accessJti: string; accessExpires: string; idleExpiresAt: string };
/** What a refresh token grants, fixed when it is first issued. */
export type RefreshGrant = {
  clientId: string;
  applicationId: string;
  userId: string;
  scopes: string[];
  audience: string[];
  sessionId: string | null;
  authTime: string;
  amr: string[];
  expiresAt: string;
};
export const refreshTokenAdded = refreshToken.defineEvent<RefreshRotation & RefreshGrant>("oidc.refresh_token.added");
export const refreshTokenRenewed = refreshToken.defineEvent<RefreshRotation>("oidc.refresh_token.renewed");
/** Its access token is revoked too. */
export const refreshTokenRevoked = refreshToken.defineEvent("oidc.refresh_token.revoked");
/** The aggregate ID is the token's `jti`; `exp` in seconds, as in the token. */
export const accessTokenRevoked = oidcToken.defineEvent<{ exp: number }>("oidc.access_token.revoked");

/** `agentHash`: SHA-256 of the browser's cookie. */
/** `amr`: the methods used (absent in older events: a password). */
/** `idpId`: the provider the user signed in through (amr `fed`). */
export const sessionAdded = session.defineEvent<{ agentHash: string; userId: string; amr?: string[]; idpId?: string }>("session.session.added");
/** The auth time is the event's time. */
export const sessionReauthenticated = session.defineEvent<{ amr?: string[]; idpId?: string }>("session.session.reauthenticated");
export const sessionTerminated = session.defineEvent("session.session.terminated");
/** What a session of the sessions API proved, each check with its time (ISO); `user` names the user checked. */
export type SessionFactors = {
  user: { id: string; checkedAt: string };
  password?: { checkedAt: string };
  totp?: { checkedAt: string };
  otpEmail?: { checkedAt: string };
  otpSms?: { checkedAt: string };
  /** A security key (`userVerified` false) or a passkey with user verification. */
  webAuthN?: { checkedAt: string; userVerified: boolean };
  /** A sign-in through an external identity provider (an intent of the intents API, used up by the check). */
  idpIntent?: { checkedAt: string; idpId: string };
  /** A browser session's sign-in through an external identity provider (the login UI's). */
  federated?: { idpId: string };
  /** The options last handed out for a WebAuthn check: single use, until `expiresAt`. */
  webAuthNChallenge?: { challenge: string; rpId: string; userVerified: boolean; expiresAt: string };
};
/** A session of the sessions API: `tokenHash` the SHA-256 of its token; `expiresAt` null: until deleted. */
export const apiSessionCreated = session.defineEvent<{ userId: string; tokenHash: string; factors: SessionFactors; amr: string[]; expiresAt: string | null }>(
  "session.api.created",
);
/** Checks added: the factors and amr after them; the auth time is the event's time when a credential was checked. */
export const apiSessionChecked = session.defineEvent<{ factors: SessionFactors; amr: string[]; expiresAt: string | null; authenticated: boolean }>(
  "session.api.checked",
);

// Settings: one aggregate per kind and owning context (`settingsAggregateId`); each kind of
// src/domain/settings-kinds.ts names its event here.

/** Properties set and reset (they fall back to the parent context's value) in one context. */
export type SettingsSet = { ownerType: ContextType; ownerId: string; set: Record<string, unknown>; reset: string[] };
export const featureSet = settings.defineEvent<SettingsSet>("settings.feature.set");
export const languageSet = settings.defineEvent<SettingsSet>("settings.language.set");
export const passwordComplexitySet = settings.defineEvent<SettingsSet>("settings.password_complexity.set");
export const lockoutSet = settings.defineEvent<SettingsSet>("settings.lockout.set");
export const loginSettingsSet = settings.defineEvent<SettingsSet>("settings.login.set");
export const securitySettingsSet = settings.defineEvent<SettingsSet>("settings.security.set");
export const domainSettingsSet = settings.defineEvent<SettingsSet>("settings.domain.set");
export const textSettingsSet = settings.defineEvent<SettingsSet>("settings.text.set");
export const brandingSet = settings.defineEvent<SettingsSet>("settings.branding.set");
export const brandingPreviewSet = settings.defineEvent<SettingsSet>("settings.branding_preview.set");
/** An uploaded branding file; the aggregate ID is its SHA-256 (hex), `data` its bytes (base64). */
export const brandingAssetAdded = brandingAsset.defineEvent<{ contentType: string; data: string }>("branding.asset.added");

// Actions: targets and executions

/** `signingKey`: encrypted with the master key. */
export const targetAdded = target.defineEvent<TargetConfig & { signingKey: string }>("action.target.added");
export const targetChanged = target.defineEvent<Partial<TargetConfig>>("action.target.changed");
export const targetRemoved = target.defineEvent("action.target.removed");
export const executionSet = execution.defineEvent<{ conditionType: string; targets: string[]; includes: string[] }>("action.execution.set");
export const executionRemoved = execution.defineEvent("action.execution.removed");

// Identity providers

export type IdpOwnerFields = { ownerType: ContextType; ownerId: string; ownerPolicy: Policy };
/**
 * A provider of any kind (`type`: its ProviderType number). `config`: the kind's configuration as proto JSON,
 * without its secret; `secret`: that (client secret, bind password, private key) encrypted with the master key,
 * absent when none was given.
 */
export const idpAdded = idp.defineEvent<IdpConfig & IdpOwnerFields & { type: number; secret?: string }>("idp.idp.added");
/** `config` replaces the whole configuration; a present `secret` replaces the stored one. */
export const idpChanged = idp.defineEvent<Partial<IdpConfig> & { ownerPolicy?: Policy; secret?: string }>("idp.idp.changed");
/** What the first round wrote for the GitLab kind, still reduced from the log (`clientSecret` sealed). */
type GitlabConfigV1 = { name: string; options: object; clientId: string; scopes: string[] };
export const gitlabIdpAdded = idp.defineEvent<GitlabConfigV1 & IdpOwnerFields & { clientSecret?: string }>("idp.gitlab.added");
export const gitlabIdpChanged = idp.defineEvent<Partial<GitlabConfigV1> & { ownerPolicy?: Policy; clientSecret?: string }>("idp.gitlab.changed");
/** A child context's own policy; `inherit` removes it. */
export const idpStatePolicySet = idp.defineEvent<{ contextType: ContextType; contextId: string; policy: Policy }>("idp.state_policy.set");
export const idpRemoved = idp.defineEvent("idp.idp.removed");

// Notification providers (SMTP, SMS) of an instance

/** `secret`: encrypted with the master key ("" when none). */
export const notificationProviderAdded = notificationProvider.defineEvent<ProviderFields>("notification.provider.added");
/** Only the fields that changed; `config` is the whole new config. */
export const notificationProviderChanged = notificationProvider.defineEvent<Partial<Omit<ProviderFields, "kind">>>("notification.provider.changed");
export const notificationProviderActivated = notificationProvider.defineEvent("notification.provider.activated");
export const notificationProviderDeactivated = notificationProvider.defineEvent("notification.provider.deactivated");
export const notificationProviderRemoved = notificationProvider.defineEvent("notification.provider.removed");

// Codes sent to a user (the notification worker sends each; `code` encrypted with the master key, `expiresAt` ISO 8601)

// `returned`: the code went back to the API caller (a custom UI sends it itself), so the worker sends nothing.

export const emailCodeAdded = user.defineEvent<{ code: string; expiresAt: string; returned?: boolean }>("user.email.code_added");
export const phoneCodeAdded = user.defineEvent<{ code: string; expiresAt: string; returned?: boolean }>("user.phone.code_added");
/** `reason`: "init" (a user created without a password) or "reset" (forgot password). */
export const passwordCodeAdded = user.defineEvent<{ code: string; expiresAt: string; reason: "init" | "reset"; returned?: boolean }>(
  "user.password.code_added",
);
/** The address was proven with the code sent to it (or by setting the initial password from the mailed link). */
export const emailVerified = user.defineEvent("user.email.verified");
export const phoneVerified = user.defineEvent("user.phone.verified");
/** One-time codes by e-mail or SMS as a second factor at sign-in, turned on and off per user. */
export const otpEmailAdded = user.defineEvent("user.otp_email.added");
export const otpEmailRemoved = user.defineEvent("user.otp_email.removed");
export const otpSmsAdded = user.defineEvent("user.otp_sms.added");
export const otpSmsRemoved = user.defineEvent("user.otp_sms.removed");
/** A sign-in's one-time code, sent by the worker (`code` sealed). */
export const otpEmailCodeAdded = user.defineEvent<{ code: string; expiresAt: string }>("user.otp_email.code_added");
export const otpSmsCodeAdded = user.defineEvent<{ code: string; expiresAt: string }>("user.otp_sms.code_added");
/** The sign-in's code was right; it is used up. */
export const otpEmailCheckSucceeded = user.defineEvent("user.otp_email.check_succeeded");
export const otpSmsCheckSucceeded = user.defineEvent("user.otp_sms.check_succeeded");
/** A locked user with a verified e-mail address is mailed a link that unlocks it (appended with the lock). */
export const unlockCodeAdded = user.defineEvent<{ code: string; expiresAt: string }>("user.unlock.code_added");

/** A message the notification worker gave up on (src/notification/worker.ts); the aggregate ID is the message's ID. */
export const notificationMessageFailed = notificationMessage.defineEvent<{ userId: string; channel: string; kind: string; attempts: number; reason: string }>(
  "notification.message.failed",
);

// User schemas: JSON Schemas users may be created with; `revision` counts the schema's versions.

export type UserSchemaConfig = { type: string; schema: object; possibleAuthenticators: string[] };
export const userSchemaAdded = userSchema.defineEvent<UserSchemaConfig>("user_schema.added");
/** The fields that changed; `revision` is the new one when the schema itself changed. */
export const userSchemaChanged = userSchema.defineEvent<Partial<UserSchemaConfig> & { revision?: number }>("user_schema.changed");
export const userSchemaDeactivated = userSchema.defineEvent("user_schema.deactivated");
export const userSchemaReactivated = userSchema.defineEvent("user_schema.reactivated");
export const userSchemaRemoved = userSchema.defineEvent("user_schema.removed");
/** A user's data, validated against the schema at `schemaRevision`. */
export const userSchemaDataSet = user.defineEvent<{ schemaId: string; schemaRevision: number; data: object }>("user.schema_data.set");
