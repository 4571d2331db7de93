import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { availableParallelism } from "node:os";
import { dirname, join, resolve } from "node:path";
import { dnsServerProblem, type DomainValidationConfig, httpOriginProblem } from "../domain/org-domains.js";
import { type FailureRules, parseRateRule, type RateRule } from "../domain/rate-rules.js";
import { type ForwardedHeaders, forwardedHeaderFamilies, TrustedProxies } from "../domain/forwarded.js";
import { TargetAddressPolicy } from "../domain/target-addresses.js";
import { parseDatabaseUrl } from "./database-url.js";
import { parseArgs } from "./cli.js";
import { tracingFromEnv, type TracingConfig } from "./otel.js";
import { readTlsPair, type TlsFiles, TlsPairError } from "../crypto/tls-pair.js";
import { ConfigError } from "./startup-error.js";
import { VARIABLES, type Variable, type VariableName } from "./variables.js";
import { readYamlFile } from "./yaml-file.js";

export { ConfigError } from "./startup-error.js";
export type { TracingConfig } from "./otel.js";

/**
 * The one typed configuration object. Built once at start-up from the environment and an optional YAML file
 * (`--config`). Each field names its variable; defaults and meanings are in `variables.ts`, the one list that
 * `--help` prints too.
 */
export interface Config {
  /** SVC_PORT */
  port: number;
  /** SVC_HOST */
  host: string;
  /** SVC_EXTERNAL_DOMAIN */
  externalDomain: string;
  /** SVC_EXTERNAL_PORT */
  externalPort: number;
  /** SVC_EXTERNAL_SECURE (default: true when `tls` is set). */
  externalSecure: boolean;
  /** SVC_TLS_CERT and SVC_TLS_KEY, absolute (both or neither; checked at load): the port serves TLS. */
  tls: TlsFiles | undefined;
  /** DATABASE_URL: a postgres:// URL, or undefined for the embedded database. */
  databaseUrl: string | undefined;
  /** SVC_DATABASE_DIRECT_URL: the PostgreSQL server itself when DATABASE_URL goes through a pooler. */
  databaseDirectUrl: string | undefined;
  /** SVC_DATABASE_REPLICA_URLS (streaming replicas of DATABASE_URL that serve reads) and how far behind they may be. */
  databaseReplicas: { urls: string[]; maxLagMs: number; waitMs: number };
  /**
   * SVC_DATABASE_CONNECT_TIMEOUT_MS and SVC_DATABASE_QUERY_TIMEOUT_MS (0: none): how long a new connection and a
   * call's statement wait for a database server that does not answer, before the call is answered UNAVAILABLE.
   */
  databaseTimeouts: { connectMs: number; queryMs: number };
  /** SVC_DATA_DIR, absolute. */
  dataDir: string;
  /** SVC_EXPORT_DIR, absolute (default `<data dir>/exports`): where local exports and imports live. */
  exportDir: string;
  /** SVC_MASTERKEY: 32 bytes; always set when databaseUrl is. */
  masterKey: string | undefined;
  /** SVC_FIRSTINSTANCE_PAT_PATH, absolute. */
  firstInstancePatPath: string;
  /** SVC_FIRSTINSTANCE_ADMIN_USERNAME */
  firstInstanceAdminUsername: string;
  /** SVC_FIRSTINSTANCE_ADMIN_PASSWORD; undefined: the first start generates one into `firstInstancePasswordPath`. */
  firstInstanceAdminPassword: string | undefined;
  /** Where a generated first admin password is written: `admin.password` beside the PAT file. */
  firstInstancePasswordPath: string;
  /** SVC_FIRSTINSTANCE_ORG_NAME */
  firstInstanceOrgName: string;
  /** SVC_TARGET_DENY (checked: names and ranges `TargetAddressPolicy` accepts). */
  targetDeny: string;
  /** SVC_TRUSTED_PROXIES as given (checked) and SVC_TRUSTED_PROXIES_HEADER: src/domain/forwarded.ts. */
  trustedProxies: { spec: string; headers: ForwardedHeaders };
  /** SVC_DOMAIN_VALIDATION_DNS and SVC_DOMAIN_VALIDATION_HTTP (checked). */
  domainValidation: DomainValidationConfig;
  /** SVC_RATE_LIMIT_*_FAILURES_*: limits on failed attempts (src/command/failure-limits.ts); undefined where off. */
  failureLimits: FailureRules;
  /** SVC_RATE_LIMIT_* of all requests (off by default); undefined where off. */
  rateLimits: { oauthClient?: RateRule | undefined; oauthAddress?: RateRule | undefined; loginAddress?: RateRule | undefined };
  /** SVC_LOG_LEVEL */
  logLevel: string;
  /** SVC_LOG_FORMAT: one JSON object per line (default), or one line for people. */
  logFormat: "json" | "text";
  /** SVC_CORS_ORIGINS, split at commas. */
  corsOrigins: string[];
  /** SVC_SHUTDOWN_GRACE_MS */
  shutdownGraceMs: number;
  /** SVC_PASSWORD_HASH_COST: scrypt log2 N of new password hashes. */
  passwordHashCost: number;
  /** SVC_DATABASE_POOL_SIZE: of the whole server, shared out among its workers */
  databasePoolSize: number;
  /** SVC_WORKERS: processes serving the port (1: this one) */
  workers: number;
  /**
   * SVC_IDP_ENDPOINT_OVERRIDES: the fixed origins of the vendor kinds (GitHub, Google, ...) replaced by others
   * (fixed origin -> replacement); for tests against local stand-ins, and for networks that reach a vendor
   * through a mirror.
   */
  idpEndpointOverrides: Record<string, string>;
  /** SVC_IDP_INSECURE_HTTP: external identity providers may be reached over plain http. */
  idpInsecureHttp: boolean;
  /** SVC_METRICS: serve GET /metrics. */
  metrics: boolean;
  /** SVC_SMTP_URL / SVC_SMTP_FROM: the system's default mail server; undefined: none. */
  smtp: { url: string; from: string } | undefined;
  /** Tracing asked for by the standard OTEL_* variables of the environment (`otel.ts`); undefined: none. */
  tracing: TracingConfig | undefined;
  /** Lifetimes of the OIDC provider, in seconds (SVC_OIDC_*). */
  oidc: {
    /** SVC_OIDC_ACCESS_TOKEN_LIFETIME */
    accessTokenS: number;
    /** SVC_OIDC_ID_TOKEN_LIFETIME */
    idTokenS: number;
    /** SVC_OIDC_REFRESH_TOKEN_IDLE */
    refreshIdleS: number;
    /** SVC_OIDC_REFRESH_TOKEN_LIFETIME */
    refreshAbsoluteS: number;
    /** SVC_OIDC_REFRESH_TOKEN_GRACE */
    refreshGraceS: number;
    /** SVC_OIDC_SIGNING_KEY_LIFETIME */
    signingKeyS: number;
  };
  /** Lifetimes of browser sessions, in seconds: SVC_SESSION_IDLE, SVC_SESSION_LIFETIME. */
  sessions: { idleS: number; maxS: number };
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

/**
 * The variables as the loader sees them: the environment, else the file, else the default from `variables.ts`.
 * An empty environment value counts as unset, so `SVC_PORT= npm start` does not hide the file's port.
 */
class Source {
  private readonly defaults = new Map<string, string | undefined>(VARIABLES.map((v: Variable) => [v.name, v.default]));

  constructor(
    private readonly env: Env,
    private readonly file: Record<string, string>,
    private readonly origins: Record<string, string>,
  ) {}

  /** The value that applies, or undefined for a variable without a fixed default that nobody set. */
  get(key: VariableName): string | undefined {
    const fromEnv = this.env[key];
    if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
    const fromFile = this.file[key];
    if (fromFile !== undefined && fromFile !== "") return fromFile;
    return this.defaults.get(key);
  }

  /** The variable's name for a message, with the file key it came from when it came from the file. */
  label(key: VariableName): string {
    const fromEnv = this.env[key];
    return (fromEnv === undefined || fromEnv === "") && this.origins[key] ? `${key} (${this.origins[key]})` : key;
  }

  int(key: VariableName, min: number, max: number, fallback?: number): number {
    const v = this.get(key);
    if (v === undefined) return fallback!;
    const n = Number(v);
    if (v.trim() === "" || !Number.isInteger(n) || n < min || n > max)
      throw new ConfigError(`${this.label(key)} must be an integer from ${min} to ${max}, got "${v}"`);
    return n;
  }

  bool(key: VariableName, fallback?: boolean): boolean {
    const v = this.get(key) ?? "";
    if (v === "" && fallback !== undefined) return fallback;
    // Only the spellings the documentation uses: 1/0 and yes/no were accepted once, nowhere documented.
    if (/^(true|on)$/i.test(v)) return true;
    if (/^(false|off)$/i.test(v)) return false;
    throw new ConfigError(`${this.label(key)} must be true or false (or on, off), got "${v}"`);
  }
}

/**
 * DATABASE_URL must be a PostgreSQL URL with a server to reach: a host name, or a Unix socket directory as
 * `?host=/var/run/postgresql`. Checked here so that a typo is one clear line, not a driver's stack trace
 * ("notaurl" used to end as "getaddrinfo ENOTFOUND base", and mysql:// was handed to the PostgreSQL driver).
 * The value is never echoed: it usually holds a password.
 */
function checkDatabaseUrl(value: string, label: string): string {
  let url: URL;
  try {
    // several servers (host1:5432,host2:5432) are checked as the first; the list is taken apart by the storage
    const parsed = parseDatabaseUrl(value);
    url = new URL(parsed.single);
  } catch (err) {
    if (err instanceof Error && !(err instanceof TypeError)) throw new ConfigError(`${label} ${err.message}`);
    throw new ConfigError(
      `${label} is not a valid URL; expected postgres://user:password@host:5432/database (special characters in the password must be percent-encoded)`,
    );
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    throw new ConfigError(`${label} must be a postgres:// or postgresql:// URL, not ${url.protocol}//; only PostgreSQL is supported`);
  }
  if (!url.hostname && !url.searchParams.get("host")) {
    throw new ConfigError(
      `${label} names no server: give a host (postgres://user:password@host:5432/database) or a socket directory (?host=/var/run/postgresql)`,
    );
  }
  return value;
}

/** Builds the configuration. `argv` is the command line after the script (only `--config` matters here). */
function rateRule(s: Source, name: VariableName): RateRule | undefined {
  try {
    return parseRateRule(s.get(name)!);
  } catch (e) {
    throw new ConfigError(`${s.label(name)} ${(e as Error).message}`);
  }
}

function trustedProxies(s: Source): { spec: string; headers: ForwardedHeaders } {
  const spec = s.get("SVC_TRUSTED_PROXIES") ?? "";
  try {
    new TrustedProxies(spec);
  } catch (e) {
    throw new ConfigError(`${s.label("SVC_TRUSTED_PROXIES")}: ${(e as Error).message}`);
  }
  const headers = s.get("SVC_TRUSTED_PROXIES_HEADER")!.trim().toLowerCase();
  if (!forwardedHeaderFamilies.includes(headers as ForwardedHeaders)) {
    throw new ConfigError(`${s.label("SVC_TRUSTED_PROXIES_HEADER")} must be ${forwardedHeaderFamilies.join(" or ")}, got "${headers}"`);
  }
  return { spec, headers: headers as ForwardedHeaders };
}

function targetDeny(s: Source): string {
  const spec = s.get("SVC_TARGET_DENY")!;
  try {
    new TargetAddressPolicy(spec);
  } catch (e) {
    throw new ConfigError(`${s.label("SVC_TARGET_DENY")}: ${(e as Error).message}`);
  }
  return spec;
}

/**
 * SVC_TLS_CERT and SVC_TLS_KEY: both or neither. The files are read and checked here, so that a wrong path, a
 * file that is not PEM or a key of another certificate stops the start with one line naming the variable; the
 * listener reads them again when it starts and whenever they change (src/server/tls-files.ts).
 */
function tlsFiles(s: Source): TlsFiles | undefined {
  const cert = s.get("SVC_TLS_CERT");
  const key = s.get("SVC_TLS_KEY");
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined || key === undefined) {
    throw new ConfigError(
      `SVC_TLS_CERT and SVC_TLS_KEY go together: ${cert === undefined ? s.label("SVC_TLS_KEY") : s.label("SVC_TLS_CERT")} is set, ${cert === undefined ? "SVC_TLS_CERT" : "SVC_TLS_KEY"} is not`,
    );
  }
  const files = { certPath: resolve(cert), keyPath: resolve(key) };
  try {
    readTlsPair(files);
  } catch (e) {
    if (e instanceof TlsPairError) throw new ConfigError(e.message);
    throw e;
  }
  return files;
}

function databaseDirectUrl(s: Source, databaseUrl: string | undefined): string | undefined {
  const raw = s.get("SVC_DATABASE_DIRECT_URL");
  if (raw === undefined) return undefined;
  const label = s.label("SVC_DATABASE_DIRECT_URL");
  if (databaseUrl === undefined) throw new ConfigError(`${label} needs DATABASE_URL: it is the server behind DATABASE_URL's pooler`);
  return checkDatabaseUrl(raw, label);
}

function databaseReplicas(s: Source, databaseUrl: string | undefined): Config["databaseReplicas"] {
  const label = s.label("SVC_DATABASE_REPLICA_URLS");
  const urls = (s.get("SVC_DATABASE_REPLICA_URLS") ?? "")
    .split(",")
    .map((u) => u.trim())
    .filter(Boolean)
    .map((u, i) => checkDatabaseUrl(u, `${label} (URL ${i + 1})`));
  // Replicas of the embedded database cannot exist: it is this machine's own server.
  if (urls.length && databaseUrl === undefined) throw new ConfigError(`${label} needs DATABASE_URL: replicas are of a PostgreSQL server of your own`);
  return {
    urls,
    maxLagMs: s.int("SVC_DATABASE_REPLICA_MAX_LAG_MS", 0, 3_600_000),
    waitMs: s.int("SVC_DATABASE_REPLICA_WAIT_MS", 0, 10_000),
  };
}

function domainValidation(s: Source): DomainValidationConfig {
  const dnsServers = (s.get("SVC_DOMAIN_VALIDATION_DNS") ?? "")
    .split(",")
    .map((d) => d.trim())
    .filter(Boolean);
  for (const d of dnsServers) {
    const problem = dnsServerProblem(d);
    if (problem) throw new ConfigError(`${s.label("SVC_DOMAIN_VALIDATION_DNS")}: ${problem}`);
  }
  const httpOrigin = s.get("SVC_DOMAIN_VALIDATION_HTTP")!;
  const problem = httpOriginProblem(httpOrigin);
  if (problem) throw new ConfigError(`${s.label("SVC_DOMAIN_VALIDATION_HTTP")} ${problem}`);
  return { dnsServers, httpOrigin };
}

export function loadConfig(env: Env = process.env, argv: readonly string[] = process.argv.slice(2)): Config {
  const { configFile } = parseArgs(argv);
  const file = configFile ? readYamlFile(configFile) : { values: {}, origins: {} };
  const s = new Source(env, file.values, file.origins);

  const port = s.int("SVC_PORT", 0, 65535);
  const dataDir = resolve(s.get("SVC_DATA_DIR")!);
  const rawUrl = s.get("DATABASE_URL");
  const databaseUrl = rawUrl === undefined ? undefined : checkDatabaseUrl(rawUrl, s.label("DATABASE_URL"));
  const masterKey = s.get("SVC_MASTERKEY");
  if (masterKey !== undefined && Buffer.byteLength(masterKey) !== 32) {
    throw new ConfigError(`${s.label("SVC_MASTERKEY")} must be exactly 32 bytes, it is ${Buffer.byteLength(masterKey)}`);
  }
  // A generated key lives in the data dir next to the embedded database; with a server of its own the
  // database outlives any one machine's data dir, so the key must come from the operator (contract).
  if (databaseUrl !== undefined && masterKey === undefined) {
    throw new ConfigError(`SVC_MASTERKEY is required when DATABASE_URL is set: 32 bytes that encrypt the secrets in that database (e.g. openssl rand -hex 16)`);
  }
  const level = s.get("SVC_LOG_LEVEL")!;
  if (!LOG_LEVELS.includes(level)) throw new ConfigError(`${s.label("SVC_LOG_LEVEL")} must be one of ${LOG_LEVELS.join(", ")}, got "${level}"`);
  const logFormat = s.get("SVC_LOG_FORMAT")!;
  if (logFormat !== "json" && logFormat !== "text") throw new ConfigError(`${s.label("SVC_LOG_FORMAT")} must be json or text, got "${logFormat}"`);
  const tls = tlsFiles(s);
  const corsOrigins = corsOriginList(s);
  return {
    port,
    host: listenHost(s),
    externalDomain: externalDomain(s),
    externalPort: s.int("SVC_EXTERNAL_PORT", 0, 65535, port),
    // Served over TLS, the issuer is https unless SVC_EXTERNAL_SECURE says otherwise.
    externalSecure: s.bool("SVC_EXTERNAL_SECURE", tls !== undefined),
    tls,
    databaseUrl,
    dataDir,
    exportDir: resolve(s.get("SVC_EXPORT_DIR") ?? join(dataDir, "exports")),
    masterKey,
    firstInstancePatPath: resolve(s.get("SVC_FIRSTINSTANCE_PAT_PATH") ?? `${dataDir}/admin.pat`),
    firstInstanceAdminUsername: firstInstanceUsername(s),
    firstInstanceAdminPassword: s.get("SVC_FIRSTINSTANCE_ADMIN_PASSWORD"),
    firstInstancePasswordPath: join(dirname(resolve(s.get("SVC_FIRSTINSTANCE_PAT_PATH") ?? `${dataDir}/admin.pat`)), "admin.password"),
    firstInstanceOrgName: firstInstanceOrgName(s),
    targetDeny: targetDeny(s),
    trustedProxies: trustedProxies(s),
    domainValidation: domainValidation(s),
    failureLimits: {
      signInAddress: rateRule(s, "SVC_RATE_LIMIT_SIGNIN_FAILURES_ADDRESS"),
      signInAccount: rateRule(s, "SVC_RATE_LIMIT_SIGNIN_FAILURES_ACCOUNT"),
      tokenAddress: rateRule(s, "SVC_RATE_LIMIT_TOKEN_FAILURES_ADDRESS"),
    },
    rateLimits: {
      oauthClient: rateRule(s, "SVC_RATE_LIMIT_OAUTH_CLIENT"),
      oauthAddress: rateRule(s, "SVC_RATE_LIMIT_OAUTH_ADDRESS"),
      loginAddress: rateRule(s, "SVC_RATE_LIMIT_LOGIN_ADDRESS"),
    },
    logLevel: level,
    logFormat,
    corsOrigins,
    shutdownGraceMs: s.int("SVC_SHUTDOWN_GRACE_MS", 0, 600_000),
    passwordHashCost: s.int("SVC_PASSWORD_HASH_COST", 10, 20),
    databasePoolSize: s.int("SVC_DATABASE_POOL_SIZE", 1, 1000),
    databaseReplicas: databaseReplicas(s, databaseUrl),
    databaseDirectUrl: databaseDirectUrl(s, databaseUrl),
    databaseTimeouts: { connectMs: s.int("SVC_DATABASE_CONNECT_TIMEOUT_MS", 100, 600_000), queryMs: s.int("SVC_DATABASE_QUERY_TIMEOUT_MS", 0, 3_600_000) },
    workers: s.int("SVC_WORKERS", 1, 256, usableCores()),
    metrics: s.bool("SVC_METRICS"),
    idpInsecureHttp: s.bool("SVC_IDP_INSECURE_HTTP"),
    idpEndpointOverrides: endpointOverrides(s.label("SVC_IDP_ENDPOINT_OVERRIDES"), s.get("SVC_IDP_ENDPOINT_OVERRIDES") ?? ""),
    smtp: smtpDefault(s),
    tracing: tracingFromEnv(env),
    oidc: {
      accessTokenS: s.int("SVC_OIDC_ACCESS_TOKEN_LIFETIME", 1, 31_536_000),
      idTokenS: s.int("SVC_OIDC_ID_TOKEN_LIFETIME", 1, 31_536_000),
      refreshIdleS: s.int("SVC_OIDC_REFRESH_TOKEN_IDLE", 1, 315_360_000),
      refreshAbsoluteS: s.int("SVC_OIDC_REFRESH_TOKEN_LIFETIME", 1, 315_360_000),
      refreshGraceS: s.int("SVC_OIDC_REFRESH_TOKEN_GRACE", 0, 300),
      signingKeyS: s.int("SVC_OIDC_SIGNING_KEY_LIFETIME", 60, 31_536_000),
    },
    sessions: { idleS: s.int("SVC_SESSION_IDLE", 1, 31_536_000), maxS: s.int("SVC_SESSION_LIFETIME", 1, 31_536_000) },
  };
}

/** The default mail server: an smtp: or smtps: URL (never echoed: it may hold a password) and a sender. */
function smtpDefault(s: Source): Config["smtp"] {
  const url = s.get("SVC_SMTP_URL");
  const from = s.get("SVC_SMTP_FROM");
  // The sender is checked whenever it is set, so that a typo shows before the mail server is configured.
  if (from !== undefined) {
    const problem = senderProblem(from);
    if (problem) throw new ConfigError(`${s.label("SVC_SMTP_FROM")} ${problem}`);
  }
  if (!url) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`${s.label("SVC_SMTP_URL")} must be an smtp:// or smtps:// URL`);
  }
  if ((parsed.protocol !== "smtp:" && parsed.protocol !== "smtps:") || !parsed.hostname) {
    throw new ConfigError(`${s.label("SVC_SMTP_URL")} must be an smtp:// or smtps:// URL with a host`);
  }
  if (!from) throw new ConfigError("SVC_SMTP_FROM is required with SVC_SMTP_URL");
  return { url, from };
}

/**
 * What is wrong with SVC_SMTP_FROM, or undefined: an address, or `Name <address>`; no line breaks or other
 * control characters (the value goes into a mail header).
 */
function senderProblem(from: string): string | undefined {
  const expected = `must be an address or "Name <address>" (e.g. "IAM <noreply@example.com>"), got "${from.slice(0, 200)}"`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(from)) return "must be one line without control characters";
  const m = /^(?:([^<>]*?)\s*<([^<>]+)>|([^<>]+))$/.exec(from.trim());
  const address = m?.[2] ?? m?.[3];
  if (!address || !/^[^\s@"(),:;<>[\\\]]+@[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/i.test(address.trim())) return expected;
  return undefined;
}

/** A host name (letters, digits and inner hyphens per label; an IDN in its xn-- form) of at most 253 characters. */
function isHostName(value: string): boolean {
  return value.length <= 253 && value.split(".").every((l) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i.test(l));
}

/** SVC_HOST: what the listener binds, an IP address without brackets or a host name. */
function listenHost(s: Source): string {
  const host = s.get("SVC_HOST")!;
  if (isIP(host) || isHostName(host)) return host;
  throw new ConfigError(
    `${s.label("SVC_HOST")} must be an IP address (0.0.0.0, ::, 127.0.0.1, IPv6 without brackets) or a host name to listen on, got "${host.slice(0, 200)}"`,
  );
}

/** SVC_EXTERNAL_DOMAIN: a host name or IPv4 address alone; the scheme and port come from their own variables. */
function externalDomain(s: Source): string {
  const domain = s.get("SVC_EXTERNAL_DOMAIN")!;
  if (isIP(domain) === 4 || (isIP(domain) === 0 && isHostName(domain))) return domain;
  throw new ConfigError(
    `${s.label("SVC_EXTERNAL_DOMAIN")} must be a host name such as id.example.com (or an IPv4 address), without scheme, port or path (those are SVC_EXTERNAL_SECURE and SVC_EXTERNAL_PORT), got "${domain.slice(0, 200)}"`,
  );
}

/** SVC_FIRSTINSTANCE_ADMIN_USERNAME: the rule of the user API (1 to 200 characters, no white space). */
function firstInstanceUsername(s: Source): string {
  const name = s.get("SVC_FIRSTINSTANCE_ADMIN_USERNAME")!;
  if (/^\S{1,200}$/u.test(name)) return name;
  throw new ConfigError(`${s.label("SVC_FIRSTINSTANCE_ADMIN_USERNAME")} must be 1 to 200 characters without white space, got "${name.slice(0, 200)}"`);
}

/** SVC_FIRSTINSTANCE_ORG_NAME: the rule of the organisation API (1 to 200 characters), not blank, one line. */
function firstInstanceOrgName(s: Source): string {
  const name = s.get("SVC_FIRSTINSTANCE_ORG_NAME")!;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (name.trim() !== "" && [...name].length <= 200 && !/[\u0000-\u001f\u007f]/.test(name)) return name;
  throw new ConfigError(`${s.label("SVC_FIRSTINSTANCE_ORG_NAME")} must be 1 to 200 characters on one line, not blank`);
}

/**
 * SVC_CORS_ORIGINS: `*`, or origins as a browser sends them in its Origin header (http(s)://host[:port], no path),
 * compared exactly by the CORS plugin: a path, a pattern or a typo would never match, so it stops the start
 * instead. Each is kept in the URL standard's spelling (lower-case host, no default port, IDNs as xn--).
 */
function corsOriginList(s: Source): string[] {
  const out: string[] = [];
  for (const entry of s
    .get("SVC_CORS_ORIGINS")!
    .split(",")
    .map((o) => o.trim())
    .filter(Boolean)) {
    if (entry === "*") {
      out.push(entry);
      continue;
    }
    let origin: string | undefined;
    // A trailing slash alone is tolerated (a copied address); anything else after the host and port is not.
    if (/^https?:\/\/[^/?#@\s*]+\/?$/i.test(entry) && URL.canParse(entry)) {
      const url = new URL(entry);
      if (isIP(url.hostname) || isHostName(url.hostname) || /^\[[0-9a-f:.]+\]$/i.test(url.hostname)) origin = url.origin;
    }
    if (origin === undefined) {
      throw new ConfigError(
        `${s.label("SVC_CORS_ORIGINS")} must be * or comma-separated origins (http(s)://host[:port], no path, no wildcards), got "${entry.slice(0, 200)}"`,
      );
    }
    out.push(origin);
  }
  return out;
}

/** `<origin>=<origin>,...`: each an http(s) origin (no path), the second replacing the first. */
function endpointOverrides(label: string, value: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of value
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [from, to, ...rest] = pair.split("=");
    const origin = (u: string | undefined) => {
      try {
        const url = new URL(u ?? "");
        return /^https?:$/.test(url.protocol) && url.pathname === "/" && !url.search ? url.origin : undefined;
      } catch {
        return undefined;
      }
    };
    const a = origin(from);
    const b = origin(to);
    if (!a || !b || rest.length)
      throw new ConfigError(`${label} must be comma-separated <origin>=<origin> pairs (e.g. https://github.com=http://127.0.0.1:5001), got "${pair}"`);
    out[a] = b;
  }
  return out;
}

/**
 * The cores this process may use: the machine's, or fewer when its cgroup has a CPU quota (a container or pod
 * with a CPU limit), which Node 20's availableParallelism does not count. A pod limited to 1 CPU on a 64-core
 * node runs one worker, not 64 that its memory limit would not hold.
 */
export function usableCores(): number {
  const cores = availableParallelism();
  try {
    const [quota, period] = readFileSync("/sys/fs/cgroup/cpu.max", "utf8").trim().split(/\s+/);
    const limit = Number(quota) / Number(period);
    return quota === "max" || !(limit > 0) ? cores : Math.max(1, Math.min(cores, Math.ceil(limit)));
  } catch {
    return cores;
  }
}
