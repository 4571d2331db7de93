/**
 * Every configuration variable, once: its name, its default and what it means. The loader
 * (`config.ts`) reads only names from this list (the type `VariableName` enforces it) and takes the
 * defaults from here, `--help` prints this list, and the YAML file accepts exactly these names. A new
 * variable is one new row here plus its use in `loadConfig`.
 */
export interface Variable {
  name: string;
  /** The value used when the variable is unset or empty; undefined: derived in `loadConfig` (see `shown`). */
  default?: string;
  /** How `--help` shows a default that is derived rather than fixed. */
  shown?: string;
  meaning: string;
}

export const VARIABLES = [
  { name: "SVC_PORT", default: "8080", meaning: "the one listening port for every protocol (0: any free port)" },
  { name: "SVC_HOST", default: "0.0.0.0", meaning: "the address to listen on: an IP address (:: for every IPv6 one) or a host name" },
  {
    name: "SVC_EXTERNAL_DOMAIN",
    default: "localhost",
    meaning: "domain of the first instance (a host name, no scheme or port); with the port it forms the issuer",
  },
  { name: "SVC_EXTERNAL_PORT", shown: "SVC_PORT", meaning: "the port clients see" },
  {
    name: "SVC_EXTERNAL_SECURE",
    shown: "true with SVC_TLS_CERT, else false",
    meaning: "true or false (on, off); true: the issuer is https (TLS here, or at a proxy in front)",
  },
  {
    name: "SVC_TLS_CERT",
    shown: "unset",
    meaning:
      "PEM certificate (chain) file: the port serves TLS (ALPN h2, http/1.1) for every protocol; with SVC_TLS_KEY; changed files are picked up without a restart",
  },
  { name: "SVC_TLS_KEY", shown: "unset", meaning: "PEM private key file of SVC_TLS_CERT (unencrypted)" },
  {
    name: "DATABASE_URL",
    shown: "unset",
    meaning: "unset: embedded database in SVC_DATA_DIR; set: that PostgreSQL server (postgres://user:password@host:5432/database)",
  },
  { name: "SVC_DATA_DIR", default: "./.data", meaning: "embedded database, generated master key, first-instance outputs" },
  {
    name: "SVC_MASTERKEY",
    shown: "generated into the data dir",
    meaning: "32 bytes that encrypt secrets at rest; required with DATABASE_URL",
  },
  { name: "SVC_FIRSTINSTANCE_PAT_PATH", shown: "<data dir>/admin.pat", meaning: "where the first start writes the IAM_OWNER service user's PAT" },
  { name: "SVC_FIRSTINSTANCE_ADMIN_USERNAME", default: "admin", meaning: "the first instance's human administrator" },
  {
    name: "SVC_FIRSTINSTANCE_ADMIN_PASSWORD",
    shown: "generated",
    meaning: "its initial password (changed at first sign-in); unset: the first start generates one into admin.password beside the PAT (mode 0600)",
  },
  { name: "SVC_FIRSTINSTANCE_ORG_NAME", default: "Default", meaning: "name of the first instance's default organisation" },
  {
    name: "SVC_TRUSTED_PROXIES",
    shown: "none",
    meaning:
      "addresses and CIDR ranges of reverse proxies (comma-separated) believed about Forwarded / X-Forwarded-For, -Proto and -Host: the client address (limits, logs) is the nearest one in the chain that is not a trusted proxy, and their scheme and host make the issuer; from any other peer those headers are ignored",
  },
  {
    name: "SVC_TRUSTED_PROXIES_HEADER",
    default: "x-forwarded",
    meaning:
      "which headers the trusted proxies write: x-forwarded (X-Forwarded-For, -Proto, -Host) or forwarded (RFC 7239); only that family is read, since proxies pass on what a client sent in the other",
  },
  {
    name: "SVC_TARGET_DENY",
    // The one place of the default: the address policy (src/domain/target-addresses.ts) takes it from here.
    default: "loopback,private,link-local,unspecified",
    meaning:
      "addresses the server may not reach for its users (execution targets, SMS/HTTP providers, SMTP hosts, S3 endpoints, domain validation), checked where an address is written and after DNS at each call: names loopback, private, link-local, unspecified, CIDR ranges or addresses, comma-separated; none: no limit (development beside local services)",
  },
  {
    name: "SVC_DOMAIN_VALIDATION_DNS",
    shown: "the system's",
    meaning: "DNS servers (address[:port], comma-separated) asked for organisation domain validation: TXT records, and the host of the HTTP check",
  },
  {
    name: "SVC_DOMAIN_VALIDATION_HTTP",
    default: "https://{domain}",
    meaning: "origin an organisation domain's validation file is fetched from ({domain} replaced; e.g. http://{domain}:8081 for a test server)",
  },
  {
    name: "SVC_RATE_LIMIT_SIGNIN_FAILURES_ADDRESS",
    default: "10/10",
    meaning:
      "failed sign-in steps per client address (IPv6: per /64): wrong passwords, unknown login names, wrong codes (TOTP, e-mail, SMS, recovery links); failures/seconds: a burst of that many, then one more every seconds/failures (10/10: one a second), shared by all processes; off: none",
  },
  {
    name: "SVC_RATE_LIMIT_SIGNIN_FAILURES_ACCOUNT",
    default: "10/300",
    meaning: "failed passwords and codes per account, from anywhere (the login UI and the sessions API); off: none",
  },
  {
    name: "SVC_RATE_LIMIT_TOKEN_FAILURES_ADDRESS",
    default: "600/60",
    meaning:
      "failed machine credentials per client address: wrong client secrets, unknown tokens at introspection, revocation, userinfo and the API, unknown PATs; off: none",
  },
  {
    name: "SVC_RATE_LIMIT_OAUTH_CLIENT",
    default: "off",
    meaning:
      "requests/seconds (all, not only failures) per client and client address at the token, introspection and revocation endpoints, counted in the database; off: none",
  },
  { name: "SVC_RATE_LIMIT_OAUTH_ADDRESS", default: "off", meaning: "requests/seconds (all) per client address at the same endpoints; off: none" },
  { name: "SVC_RATE_LIMIT_LOGIN_ADDRESS", default: "off", meaning: "form posts/seconds (all) per client address to the login UI; off: none" },
  { name: "SVC_LOG_LEVEL", default: "info", meaning: "pino level: fatal error warn info debug trace silent (debug: stacks of start-up bugs)" },
  {
    name: "SVC_LOG_FORMAT",
    default: "json",
    meaning: "json: every log line one JSON object (pino); text: every line for people (time, level, message, fields)",
  },
  {
    name: "SVC_CORS_ORIGINS",
    default: "*",
    meaning: "comma-separated origins (http(s)://host[:port], no path) allowed for browser clients; * allows any",
  },
  { name: "SVC_SHUTDOWN_GRACE_MS", default: "10000", meaning: "how long in-flight calls may take to finish after SIGTERM" },
  {
    name: "SVC_PASSWORD_HASH_COST",
    default: "15",
    meaning: "scrypt cost of new password hashes as log2 N (10-20; r=8, p=1): each step doubles a sign-in's time and memory; below 15 only for tests",
  },
  {
    name: "SVC_DATABASE_POOL_SIZE",
    default: "20",
    meaning:
      "connections the server keeps to PostgreSQL (besides one for LISTEN and one at start-up in each worker), shared out among its workers (each at least 4)",
  },
  {
    name: "SVC_DATABASE_DIRECT_URL",
    shown: "DATABASE_URL",
    meaning:
      "the PostgreSQL server itself when DATABASE_URL goes through a pooler in transaction mode (PgBouncer): the LISTEN connection and the set-up lock need a session of their own",
  },
  {
    name: "SVC_DATABASE_CONNECT_TIMEOUT_MS",
    default: "5000",
    meaning:
      "how long a new connection to PostgreSQL may take before the call waiting for it is answered UNAVAILABLE (a server that stopped answering, not one that refuses)",
  },
  {
    name: "SVC_DATABASE_QUERY_TIMEOUT_MS",
    default: "30000",
    meaning:
      "how long a call's statement waits for PostgreSQL's answer before the call is answered UNAVAILABLE and the connection is replaced; 0: no limit. Migrations and projection rebuilds are not limited",
  },
  {
    name: "SVC_DATABASE_REPLICA_URLS",
    shown: "unset",
    meaning:
      "comma-separated PostgreSQL URLs of streaming replicas of DATABASE_URL: searches, gets, introspection, userinfo, JWKS and the login pages read there once a replica has replayed what they must see; writes stay on DATABASE_URL",
  },
  {
    name: "SVC_DATABASE_REPLICA_MAX_LAG_MS",
    default: "5000",
    meaning: "a replica further behind the primary than this is skipped until it catches up",
  },
  {
    name: "SVC_DATABASE_REPLICA_WAIT_MS",
    default: "20",
    meaning: "how long a read waits for a replica to replay a write it must see before the primary serves it",
  },
  {
    name: "SVC_WORKERS",
    shown: "the cores",
    meaning:
      "server processes sharing the port (1-256): the cores this process may use (its cgroup's CPU quota counted); 1 serves from this process alone; several: a supervising process starts, replaces and drains them",
  },
  { name: "SVC_OIDC_ACCESS_TOKEN_LIFETIME", default: "43200", meaning: "seconds an access token lives (12 h)" },
  { name: "SVC_OIDC_ID_TOKEN_LIFETIME", default: "43200", meaning: "seconds an ID token lives (12 h)" },
  { name: "SVC_OIDC_REFRESH_TOKEN_IDLE", default: "2592000", meaning: "seconds unused after which a refresh token expires (30 d)" },
  { name: "SVC_OIDC_REFRESH_TOKEN_LIFETIME", default: "7776000", meaning: "seconds a refresh token lives at most, however used (90 d)" },
  {
    name: "SVC_OIDC_REFRESH_TOKEN_GRACE",
    default: "30",
    meaning: "seconds in which a retry of the same refresh gets the same new tokens instead of revoking the grant as reuse (0: none)",
  },
  { name: "SVC_OIDC_SIGNING_KEY_LIFETIME", default: "21600", meaning: "seconds a signing key signs before the next one takes over (6 h)" },
  {
    name: "SVC_SESSION_IDLE",
    default: "1800",
    meaning: "seconds a browser session lives unused (30 min): then it and the tokens bound to it end; sign-ins and token checks use it",
  },
  {
    name: "SVC_SESSION_LIFETIME",
    default: "36000",
    meaning: "seconds a browser session lives at most after its sign-in, however used (10 h); offline refresh tokens are not bound to it",
  },
  {
    name: "SVC_METRICS",
    default: "on",
    meaning: "on: GET /metrics serves Prometheus metrics on the listening port, without authentication (keep it off public routes); off: 404",
  },
  {
    name: "SVC_IDP_INSECURE_HTTP",
    default: "off",
    meaning:
      "on: external identity providers may be reached over plain http:// (a provider inside a trusted network; their tokens could be read and changed on the way); off: https only",
  },
  {
    name: "SVC_IDP_ENDPOINT_OVERRIDES",
    shown: "unset",
    meaning:
      "for tests and mirrors: <origin>=<origin> pairs, comma-separated; the vendor kinds' fixed endpoints (GitHub, GitLab.com, Google, Azure AD, Apple) at the first origin are reached at the second",
  },
  {
    name: "SVC_SMTP_URL",
    shown: "unset",
    meaning:
      "system-wide default mail server for instances without an active SMTP provider: smtp://user:pass@host:port (STARTTLS when offered) or smtps://... (TLS)",
  },
  {
    name: "SVC_EXPORT_DIR",
    shown: "<data dir>/exports",
    meaning: "local files of export (local_output) and import (data_orgs_local); paths outside it are refused",
  },
  { name: "SVC_SMTP_FROM", shown: "unset", meaning: 'sender of the default mail server\'s messages ("Name <address>" or an address)' },
] as const satisfies readonly Variable[];

export type VariableName = (typeof VARIABLES)[number]["name"];

const byName = new Map<string, Variable>(VARIABLES.map((v) => [v.name, v]));

export function variable(name: string): Variable | undefined {
  return byName.get(name);
}

/** The width `--help` keeps to. */
export const HELP_WIDTH = 100;

/**
 * `text` word-wrapped to `width` columns: the first line starts with `first`, the others with `rest` (a hanging
 * indent). A word longer than a whole line stands alone on its line rather than being broken.
 */
export function wrap(text: string, first: string, rest: string, width = HELP_WIDTH): string[] {
  const lines: string[] = [];
  let line = first;
  let empty = true; // no word on `line` yet
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (!empty && line.length + 1 + word.length > width) {
      lines.push(line);
      line = rest;
      empty = true;
    }
    line += empty ? word : ` ${word}`;
    empty = false;
  }
  lines.push(line);
  return lines.map((l) => l.trimEnd());
}

/**
 * The variables for `--help`: name, default and meaning, the names aligned in a column and the default and
 * meaning after them word-wrapped to `width` with a hanging indent.
 */
export function describeVariables(indent = "  ", width = HELP_WIDTH): string {
  const rows = VARIABLES.map((v: Variable) => [v.name, v.default !== undefined ? v.default : (v.shown ?? ""), v.meaning] as const);
  const w0 = Math.max(...rows.map((r) => r[0].length));
  const hanging = " ".repeat(indent.length + w0 + 4);
  return rows.flatMap(([n, d, m]) => wrap(m, `${indent}${n.padEnd(w0)}  ${d}  `, hanging, width)).join("\n");
}

/** Levenshtein distance, for "did you mean" on a misspelled key. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}

/** The known variable closest to `name`, if it is close enough to be a likely misspelling (or a missing SVC_ prefix). */
export function closestVariable(name: string): string | undefined {
  if (byName.has(`SVC_${name}`)) return `SVC_${name}`;
  let best: string | undefined;
  let bestD = Infinity;
  for (const v of VARIABLES) {
    const d = distance(name, v.name);
    if (d < bestD) [best, bestD] = [v.name, d];
  }
  return bestD <= Math.max(2, Math.floor(name.length / 4)) ? best : undefined;
}
