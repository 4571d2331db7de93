import { readFileSync } from "node:fs";
import { resolve } from "node:path";

/** The one typed configuration object. Built once at start-up from the environment (and an optional YAML file). */
export interface Config {
  /** SVC_PORT (8080): the one listening port for every protocol. */
  port: number;
  /** SVC_HOST (0.0.0.0): the address to listen on. */
  host: string;
  /** SVC_EXTERNAL_DOMAIN (localhost): domain of the first instance; with the port it forms the issuer. */
  externalDomain: string;
  /** SVC_EXTERNAL_PORT (SVC_PORT): the port clients see. */
  externalPort: number;
  /** SVC_EXTERNAL_SECURE (false): true makes the issuer https. */
  externalSecure: boolean;
  /** DATABASE_URL (unset): unset means embedded PGlite in the data dir; set means that PostgreSQL server. */
  databaseUrl: string | undefined;
  /** SVC_DATA_DIR (./.data): embedded database, generated master key, first-instance outputs. */
  dataDir: string;
  /** SVC_MASTERKEY (generated once into the data dir): 32 bytes that encrypt secrets at rest. */
  masterKey: string | undefined;
  /** SVC_FIRSTINSTANCE_PAT_PATH (<data dir>/admin.pat): where the first start writes the IAM_OWNER service user's PAT. */
  firstInstancePatPath: string;
  /** SVC_FIRSTINSTANCE_ADMIN_USERNAME (admin). */
  firstInstanceAdminUsername: string;
  /** SVC_FIRSTINSTANCE_ADMIN_PASSWORD (Password1!): change it. */
  firstInstanceAdminPassword: string;
  /** SVC_FIRSTINSTANCE_ORG_NAME (Default): name of the first instance's default organisation. */
  firstInstanceOrgName: string;
  /** SVC_LOG_LEVEL (info): pino level. */
  logLevel: string;
  /** SVC_CORS_ORIGINS (*): comma-separated origins allowed for browser clients; "*" allows any. */
  corsOrigins: string[];
  /** SVC_SHUTDOWN_GRACE_MS (10000): how long in-flight calls may take to finish on SIGTERM. */
  shutdownGraceMs: number;
  /** Lifetimes of the OIDC provider, in seconds (SVC_OIDC_*). */
  oidc: {
    /** SVC_OIDC_ACCESS_TOKEN_LIFETIME (43200 = 12 h). */
    accessTokenS: number;
    /** SVC_OIDC_ID_TOKEN_LIFETIME (43200). */
    idTokenS: number;
    /** SVC_OIDC_REFRESH_TOKEN_IDLE (2592000 = 30 d): unused that long, a refresh token expires. */
    refreshIdleS: number;
    /** SVC_OIDC_REFRESH_TOKEN_LIFETIME (7776000 = 90 d): the most a refresh token lives, however used. */
    refreshAbsoluteS: number;
    /** SVC_OIDC_SIGNING_KEY_LIFETIME (21600 = 6 h): how long a key signs before the next one takes over. */
    signingKeyS: number;
  };
}

type Env = Record<string, string | undefined>;

export class ConfigError extends Error {}

/** Reads a flat `KEY: value` YAML file (the subset configuration needs) into environment-style keys. */
function readYamlFile(path: string): Env {
  const out: Env = {};
  for (const raw of readFileSync(path, "utf8").split(/\r?\n/)) {
    const line = raw.replace(/\s+#.*$/, "").trim();
    if (!line || line.startsWith("#")) continue;
    const m = /^([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*)$/.exec(line);
    if (!m) throw new ConfigError(`config file ${path}: cannot read line "${raw}"`);
    out[m[1]!] = m[2]!.replace(/^["'](.*)["']$/, "$1");
  }
  return out;
}

function int(env: Env, key: string, fallback: number, min: number, max: number): number {
  const v = env[key];
  if (v === undefined || v === "") return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new ConfigError(`${key} must be an integer from ${min} to ${max}, got "${v}"`);
  return n;
}

function bool(env: Env, key: string, fallback: boolean): boolean {
  const v = env[key];
  if (v === undefined || v === "") return fallback;
  if (/^(true|1|yes)$/i.test(v)) return true;
  if (/^(false|0|no)$/i.test(v)) return false;
  throw new ConfigError(`${key} must be true or false, got "${v}"`);
}

/** Environment variables win over the YAML file given with --config. */
export function loadConfig(env: Env = process.env, argv: string[] = process.argv.slice(2)): Config {
  const at = argv.indexOf("--config");
  const merged: Env = at >= 0 && argv[at + 1] ? { ...readYamlFile(argv[at + 1]!), ...env } : env;
  const port = int(merged, "SVC_PORT", 8080, 0, 65535);
  const dataDir = resolve(merged.SVC_DATA_DIR || "./.data");
  const masterKey = merged.SVC_MASTERKEY || undefined;
  if (masterKey !== undefined && Buffer.byteLength(masterKey) !== 32) throw new ConfigError("SVC_MASTERKEY must be exactly 32 bytes");
  const level = merged.SVC_LOG_LEVEL || "info";
  if (!["fatal", "error", "warn", "info", "debug", "trace", "silent"].includes(level)) throw new ConfigError(`SVC_LOG_LEVEL "${level}" is not a pino level`);
  return {
    port,
    host: merged.SVC_HOST || "0.0.0.0",
    externalDomain: merged.SVC_EXTERNAL_DOMAIN || "localhost",
    externalPort: int(merged, "SVC_EXTERNAL_PORT", port, 0, 65535),
    externalSecure: bool(merged, "SVC_EXTERNAL_SECURE", false),
    databaseUrl: merged.DATABASE_URL || undefined,
    dataDir,
    masterKey,
    firstInstancePatPath: resolve(merged.SVC_FIRSTINSTANCE_PAT_PATH || `${dataDir}/admin.pat`),
    firstInstanceAdminUsername: merged.SVC_FIRSTINSTANCE_ADMIN_USERNAME || "admin",
    firstInstanceAdminPassword: merged.SVC_FIRSTINSTANCE_ADMIN_PASSWORD || "Password1!",
    firstInstanceOrgName: merged.SVC_FIRSTINSTANCE_ORG_NAME || "Default",
    logLevel: level,
    corsOrigins: (merged.SVC_CORS_ORIGINS || "*").split(",").map((s) => s.trim()).filter(Boolean),
    shutdownGraceMs: int(merged, "SVC_SHUTDOWN_GRACE_MS", 10_000, 0, 600_000),
    oidc: {
      accessTokenS: int(merged, "SVC_OIDC_ACCESS_TOKEN_LIFETIME", 43_200, 1, 31_536_000),
      idTokenS: int(merged, "SVC_OIDC_ID_TOKEN_LIFETIME", 43_200, 1, 31_536_000),
      refreshIdleS: int(merged, "SVC_OIDC_REFRESH_TOKEN_IDLE", 2_592_000, 1, 315_360_000),
      refreshAbsoluteS: int(merged, "SVC_OIDC_REFRESH_TOKEN_LIFETIME", 7_776_000, 1, 315_360_000),
      signingKeyS: int(merged, "SVC_OIDC_SIGNING_KEY_LIFETIME", 21_600, 60, 31_536_000),
    },
  };
}
