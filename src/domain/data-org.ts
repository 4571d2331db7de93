import type { IdpKind } from "./idps.js";
/**
 * The wire shapes of export and import (contract, "Export, import and user import"): ZITADEL's v1 DataOrg
 * for what this server has, in canonical protobuf JSON names. Requests may spell fields either way
 * (lowerCamelCase or the proto's snake_case); `camelKeys` makes one spelling of them before anything reads them.
 */

export interface HumanUserShape {
  userName?: string;
  profile?: { firstName?: string; lastName?: string; nickName?: string; displayName?: string; preferredLanguage?: string };
  email?: { email?: string; isEmailVerified?: boolean };
  phone?: { phone?: string; isPhoneVerified?: boolean };
  password?: string;
  hashedPassword?: { value?: string };
  passwordChangeRequired?: boolean;
  otpCode?: string;
  idps?: { configId?: string; externalUserId?: string; displayName?: string }[];
  /** Not in ZITADEL's import request: the exported user's state (USER_STATE_ACTIVE, _INACTIVE, _LOCKED). */
  state?: string;
}

export interface MachineUserShape {
  userName?: string;
  name?: string;
  description?: string;
  accessTokenType?: string;
}

export interface OidcAppShape {
  projectId?: string;
  name?: string;
  redirectUris?: string[];
  responseTypes?: string[];
  grantTypes?: string[];
  appType?: string;
  authMethodType?: string;
  postLogoutRedirectUris?: string[];
  devMode?: boolean;
  accessTokenType?: string;
  accessTokenRoleAssertion?: boolean;
  idTokenRoleAssertion?: boolean;
  idTokenUserinfoAssertion?: boolean;
  clockSkew?: string;
  /** Not in ZITADEL's request: the client ID the application had, kept so that relying parties need no change. */
  clientId?: string;
}

export interface ApiAppShape {
  projectId?: string;
  name?: string;
  authMethodType?: string;
  clientId?: string;
}

export type DataOrg = {
  orgId?: string;
  org?: { name?: string };
  domains?: { orgId?: string; domainName?: string; isVerified?: boolean; isPrimary?: boolean; validationType?: string }[];
  humanUsers?: { userId?: string; user?: HumanUserShape }[];
  machineUsers?: { userId?: string; user?: MachineUserShape }[];
  projects?: { projectId?: string; project?: { name?: string; projectRoleAssertion?: boolean; projectRoleCheck?: boolean } }[];
  projectRoles?: { projectId?: string; roleKey?: string; displayName?: string; group?: string }[];
  oidcApps?: { appId?: string; app?: OidcAppShape }[];
  apiApps?: { appId?: string; app?: ApiAppShape }[];
  /** `userGrantId` is not in ZITADEL's AddUserGrantRequest: this server keeps the grant's ID too. */
  userGrants?: { userGrantId?: string; userId?: string; projectId?: string; roleKeys?: string[] }[];
  orgMembers?: { userId?: string; roles?: string[] }[];
  projectMembers?: { projectId?: string; userId?: string; roles?: string[] }[];
  /** ZITADEL's DataProjectGrant: the organisation's projects granted to other organisations. */
  projectGrants?: { grantId?: string; projectGrant?: { projectId?: string; grantedOrgId?: string; roleKeys?: string[] } }[];
  /** ZITADEL's AddProjectGrantMemberRequest. */
  projectGrantMembers?: { projectId?: string; grantId?: string; userId?: string; roles?: string[] }[];
  /** The organisation's own identity providers, a list per kind (`idpLists`), without their secrets. */
} & Partial<Record<IdpListName, ExportedIdp[]>> & {
    /** ZITADEL's IDPUserLink: a user's account at an identity provider. */
    userLinks?: { userId?: string; idpId?: string; providedUserId?: string; providedUserName?: string }[];
    /** ZITADEL's SetUserMetadataRequest: `id` the user's, `value` the bytes in base64. */
    userMetadata?: { id?: string; key?: string; value?: string }[];
    lockoutPolicy?: Record<string, unknown>;
    passwordComplexityPolicy?: Record<string, unknown>;
    loginPolicy?: Record<string, unknown>;
  };

export interface ImportError {
  type: string;
  id: string;
  message: string;
}

export type ImportSuccessOrg = {
  orgId: string;
  humanUserIds: string[];
  machineUserIds: string[];
  projectIds: string[];
  projectRoles: string[];
  oidcAppIds: string[];
  apiAppIds: string[];
  userGrants: { userId: string; projectId: string }[];
  orgMembers: string[];
  projectMembers: { projectId: string; userId: string }[];
  projectGrants: { grantId: string; projectId: string; orgId: string }[];
  projectGrantMembers: { projectId: string; grantId: string; userId: string }[];
  userLinks: { userId: string; idpId: string; externalUserId: string }[];
  userMetadata: { userId: string; key: string }[];
  domains: string[];
} & { gitlabIdps: string[] } & Partial<Record<IdpListName, string[]>>;

/** The export's list of each provider kind (`gitlabIdps` as before every kind existed). */
export const idpLists = {
  oidc: "oidcIdps",
  jwt: "jwtIdps",
  ldap: "ldapIdps",
  oauth: "oauthIdps",
  azure_ad: "azureAdIdps",
  github: "githubIdps",
  github_enterprise: "githubEnterpriseIdps",
  gitlab: "gitlabIdps",
  gitlab_self_hosted: "gitlabSelfHostedIdps",
  google: "googleIdps",
  apple: "appleIdps",
  saml: "samlIdps",
} as const satisfies Record<IdpKind, string>;
export type IdpListName = (typeof idpLists)[IdpKind];

/**
 * A provider in an export: its ID (users' links name it), and its name, options, owner's policy and the kind's
 * configuration fields (proto JSON) side by side; never its secret.
 */
export interface ExportedIdp {
  idpId?: string;
  idp?: { name?: string; options?: object; ownerPolicy?: string; [field: string]: unknown };
}

/**
 * An export's or import's timeout ran out: DEADLINE_EXCEEDED, with `details` of what was completed. Not a
 * ConnectError: ConnectError's `instanceof` recognises every ConnectError, so a subclass could not be told apart.
 */
export class TimedOut extends Error {
  constructor(
    message: string,
    readonly details: unknown[] = [],
  ) {
    super(message);
  }
}

const camel = (k: string) => k.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** Every object key in lowerCamelCase, recursively (protobuf JSON accepts both spellings of a field). */
export function camelKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelKeys);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [camel(k), camelKeys(v)]));
  }
  return value;
}

const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Settings values as this server stores them (snake_case property names) from their exported camelCase form. */
export function snakeKeys(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [snake(k), v]));
}

/** The exported form of stored settings values: the property names in lowerCamelCase. */
export function camelSettings(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [camel(k), v]));
}

const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * A Go duration string ("30m", "1h30m", "90s", "1.5h") in milliseconds, as ZITADEL's `timeout` takes it;
 * undefined when it is not one. "0" and "0s" are zero.
 */
export function parseGoDuration(text: string): number | undefined {
  if (text === "0") return 0;
  if (!/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(text)) return undefined;
  let ms = 0;
  for (const m of text.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) ms += Number(m[1]) * UNITS[m[2]!]!;
  return Number.isFinite(ms) ? ms : undefined;
}

/** Milliseconds as a Go duration string ("30m0s"), the form ZITADEL's tools write. */
export function formatGoDuration(ms: number): string {
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  return `${h ? `${h}h` : ""}${h || m ? `${m}m` : ""}${s}s`;
}

/** This server's values and ZITADEL's enum names for them, both ways (`wireName`, `fromWire`). */
export const wireNames = {
  responseType: { code: "OIDC_RESPONSE_TYPE_CODE", id_token: "OIDC_RESPONSE_TYPE_ID_TOKEN", "id_token token": "OIDC_RESPONSE_TYPE_ID_TOKEN_TOKEN" },
  grantType: {
    authorization_code: "OIDC_GRANT_TYPE_AUTHORIZATION_CODE",
    implicit: "OIDC_GRANT_TYPE_IMPLICIT",
    refresh_token: "OIDC_GRANT_TYPE_REFRESH_TOKEN",
    "urn:ietf:params:oauth:grant-type:token-exchange": "OIDC_GRANT_TYPE_TOKEN_EXCHANGE",
  },
  appType: { web: "OIDC_APP_TYPE_WEB", user_agent: "OIDC_APP_TYPE_USER_AGENT", native: "OIDC_APP_TYPE_NATIVE" },
  oidcAuthMethod: {
    client_secret_basic: "OIDC_AUTH_METHOD_TYPE_BASIC",
    client_secret_post: "OIDC_AUTH_METHOD_TYPE_POST",
    none: "OIDC_AUTH_METHOD_TYPE_NONE",
    private_key_jwt: "OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT",
  },
  oidcTokenType: { opaque: "OIDC_TOKEN_TYPE_BEARER", jwt: "OIDC_TOKEN_TYPE_JWT" },
  apiAuthMethod: { client_secret_basic: "API_AUTH_METHOD_TYPE_BASIC", private_key_jwt: "API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT" },
  machineTokenType: { opaque: "ACCESS_TOKEN_TYPE_BEARER", jwt: "ACCESS_TOKEN_TYPE_JWT" },
  userState: { active: "USER_STATE_ACTIVE", inactive: "USER_STATE_INACTIVE", locked: "USER_STATE_LOCKED", initial: "USER_STATE_INITIAL" },
} as const;

type Names = typeof wireNames;

export function wireName<K extends keyof Names>(kind: K, value: string): string {
  return (wireNames[kind] as Record<string, string>)[value] ?? value;
}

/** This server's value of a ZITADEL enum name (the value itself is accepted too); undefined when unknown. */
export function fromWire<K extends keyof Names>(kind: K, wire: string | undefined): keyof Names[K] | undefined {
  if (wire === undefined) return undefined;
  const map = wireNames[kind] as Record<string, string>;
  if (wire in map) return wire as keyof Names[K];
  return Object.keys(map).find((k) => map[k] === wire) as keyof Names[K] | undefined;
}
