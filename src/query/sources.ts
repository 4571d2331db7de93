import type { Source } from "./cache.js";

/**
 * For each projection table: the aggregate types whose events' reducers write it (`src/command/*`), its own
 * aggregate first. A cached read names these as its sources, so that an event drops exactly the entries it
 * may have changed. Cascades count: removing an organisation deletes its users, so `user` lists `org`.
 * `test/platform/cache-sources.test.ts` checks this table against the reducers.
 */
export const tableSources = {
  instance: ["instance"],
  instanceDomain: ["instance"],
  org: ["org"],
  orgDomain: ["org"],
  user: ["user", "org"],
  machineKey: ["user", "org"],
  personalAccessToken: ["user", "org"],
  loginSession: ["session", "user", "org"],
  brandingAsset: ["branding_asset"],
  userTotp: ["user", "org"],
  userWebauthnKey: ["user", "org"],
  userCode: ["user", "org"],
  userOtpChannel: ["user", "org"],
  userIdpLink: ["user", "org", "idp"],
  userMetadata: ["user", "org"],
  userSchema: ["user_schema"],
  projectGrant: ["project", "org"],
  userMfaInitSkip: ["user", "org"],
  temporaryLockout: ["user"],
  membership: ["system", "instance", "org", "project", "project_grant", "user"],
  project: ["project", "org"],
  projectRole: ["project", "org"],
  application: ["application", "project", "org"],
  applicationKey: ["application", "project", "org"],
  userGrant: ["usergrant", "user", "project", "org"],
  authRequest: ["auth_request"],
  refreshToken: ["refresh_token"],
  revokedToken: ["oidc_token"],
  signingKey: ["signing_keys"],
  setting: ["settings"],
  target: ["target"],
  execution: ["execution"],
  idp: ["idp"],
  idpPolicy: ["idp"],
  notificationProvider: ["notification_provider"],
} as const satisfies Record<string, readonly string[]>;

export type Table = keyof typeof tableSources;

const combined = new Map<string, readonly Source[]>();

/** The sources of a read of these tables, every aggregate of each type (computed once per combination: reads call it on every hit). */
export function readFrom(...tables: Table[]): readonly Source[] {
  const key = tables.join(",");
  let sources = combined.get(key);
  if (!sources) {
    sources = [...new Set(tables.flatMap((t) => tableSources[t]))];
    combined.set(key, sources);
  }
  return sources;
}

/**
 * The sources of a read of one aggregate's own row of `table` (e.g. a user by its ID): that aggregate's
 * events, and every event of the other types that write the table (their cascades name no single row).
 */
export function readRow(table: Table, id: string): readonly Source[] {
  const [own, ...others] = tableSources[table];
  return [{ type: own, id }, ...others];
}
