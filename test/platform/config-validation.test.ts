import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/config.js";
import { VARIABLES, type VariableName } from "../../src/config/variables.js";
import { runCli } from "../support/cli.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "svc-config-validation-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KEY = "0123456789abcdef0123456789abcdef";

/** The message loadConfig throws for `env`, which must be a ConfigError. */
function refusal(env: Record<string, string>, argv: string[] = []): string {
  try {
    loadConfig(env, argv);
  } catch (err) {
    expect(err, String(err)).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

/**
 * One value each variable refuses (with what else it needs to get that far), or why every value is valid. A new
 * variable without a row fails the first test, so that it cannot arrive unchecked.
 */
const BAD: Record<VariableName, Record<string, string> | string> = {
  SVC_PORT: { SVC_PORT: "80a" },
  SVC_HOST: { SVC_HOST: "0.0.0.0:8080" },
  SVC_EXTERNAL_DOMAIN: { SVC_EXTERNAL_DOMAIN: "https://id.example.com" },
  SVC_EXTERNAL_PORT: { SVC_EXTERNAL_PORT: "70000" },
  SVC_EXTERNAL_SECURE: { SVC_EXTERNAL_SECURE: "yes" },
  SVC_TLS_CERT: { SVC_TLS_CERT: "/nonexistent/tls.crt" },
  SVC_TLS_KEY: { SVC_TLS_KEY: "/nonexistent/tls.key" },
  DATABASE_URL: { DATABASE_URL: "mysql://db/svc", SVC_MASTERKEY: KEY },
  SVC_DATA_DIR: "a path: any name the file system takes",
  SVC_MASTERKEY: { SVC_MASTERKEY: "too short" },
  SVC_FIRSTINSTANCE_PAT_PATH: "a path: any name the file system takes",
  SVC_FIRSTINSTANCE_ADMIN_USERNAME: { SVC_FIRSTINSTANCE_ADMIN_USERNAME: "the admin" },
  SVC_FIRSTINSTANCE_ADMIN_PASSWORD: "any password: the first sign-in changes it under the password rules",
  SVC_FIRSTINSTANCE_ORG_NAME: { SVC_FIRSTINSTANCE_ORG_NAME: "   " },
  SVC_TRUSTED_PROXIES: { SVC_TRUSTED_PROXIES: "the proxy" },
  SVC_TRUSTED_PROXIES_HEADER: { SVC_TRUSTED_PROXIES_HEADER: "via" },
  SVC_TARGET_DENY: { SVC_TARGET_DENY: "intranet" },
  SVC_DOMAIN_VALIDATION_DNS: { SVC_DOMAIN_VALIDATION_DNS: "dns.example.com" },
  SVC_DOMAIN_VALIDATION_HTTP: { SVC_DOMAIN_VALIDATION_HTTP: "https://example.com" },
  SVC_RATE_LIMIT_SIGNIN_FAILURES_ADDRESS: { SVC_RATE_LIMIT_SIGNIN_FAILURES_ADDRESS: "fast" },
  SVC_RATE_LIMIT_SIGNIN_FAILURES_ACCOUNT: { SVC_RATE_LIMIT_SIGNIN_FAILURES_ACCOUNT: "10" },
  SVC_RATE_LIMIT_TOKEN_FAILURES_ADDRESS: { SVC_RATE_LIMIT_TOKEN_FAILURES_ADDRESS: "0/60" },
  SVC_RATE_LIMIT_OAUTH_CLIENT: { SVC_RATE_LIMIT_OAUTH_CLIENT: "on" },
  SVC_RATE_LIMIT_OAUTH_ADDRESS: { SVC_RATE_LIMIT_OAUTH_ADDRESS: "1/0" },
  SVC_RATE_LIMIT_LOGIN_ADDRESS: { SVC_RATE_LIMIT_LOGIN_ADDRESS: "-1/10" },
  SVC_LOG_LEVEL: { SVC_LOG_LEVEL: "loud" },
  SVC_LOG_FORMAT: { SVC_LOG_FORMAT: "pretty" },
  SVC_CORS_ORIGINS: { SVC_CORS_ORIGINS: "not a url" },
  SVC_SHUTDOWN_GRACE_MS: { SVC_SHUTDOWN_GRACE_MS: "1.5" },
  SVC_PASSWORD_HASH_COST: { SVC_PASSWORD_HASH_COST: "9" },
  SVC_DATABASE_POOL_SIZE: { SVC_DATABASE_POOL_SIZE: "0" },
  SVC_WORKERS: { SVC_WORKERS: "0" },
  SVC_DATABASE_REPLICA_URLS: { SVC_DATABASE_REPLICA_URLS: "postgres://replica/svc" },
  SVC_DATABASE_DIRECT_URL: { DATABASE_URL: "postgres://pgbouncer:6432/svc", SVC_MASTERKEY: KEY, SVC_DATABASE_DIRECT_URL: "db:5432/svc" },
  SVC_DATABASE_REPLICA_MAX_LAG_MS: { SVC_DATABASE_REPLICA_MAX_LAG_MS: "5s" },
  SVC_DATABASE_REPLICA_WAIT_MS: { SVC_DATABASE_REPLICA_WAIT_MS: "-1" },
  SVC_DATABASE_CONNECT_TIMEOUT_MS: { SVC_DATABASE_CONNECT_TIMEOUT_MS: "0" },
  SVC_DATABASE_QUERY_TIMEOUT_MS: { SVC_DATABASE_QUERY_TIMEOUT_MS: "30s" },
  SVC_OIDC_ACCESS_TOKEN_LIFETIME: { SVC_OIDC_ACCESS_TOKEN_LIFETIME: "12h" },
  SVC_OIDC_ID_TOKEN_LIFETIME: { SVC_OIDC_ID_TOKEN_LIFETIME: "0" },
  SVC_OIDC_REFRESH_TOKEN_IDLE: { SVC_OIDC_REFRESH_TOKEN_IDLE: "-5" },
  SVC_OIDC_REFRESH_TOKEN_LIFETIME: { SVC_OIDC_REFRESH_TOKEN_LIFETIME: "forever" },
  SVC_OIDC_REFRESH_TOKEN_GRACE: { SVC_OIDC_REFRESH_TOKEN_GRACE: "301" },
  SVC_OIDC_SIGNING_KEY_LIFETIME: { SVC_OIDC_SIGNING_KEY_LIFETIME: "59" },
  SVC_SESSION_IDLE: { SVC_SESSION_IDLE: "30m" },
  SVC_SESSION_LIFETIME: { SVC_SESSION_LIFETIME: "1e99" },
  SVC_METRICS: { SVC_METRICS: "1" },
  SVC_IDP_INSECURE_HTTP: { SVC_IDP_INSECURE_HTTP: "no" },
  SVC_IDP_ENDPOINT_OVERRIDES: { SVC_IDP_ENDPOINT_OVERRIDES: "https://github.com" },
  SVC_SMTP_URL: { SVC_SMTP_URL: "http://mail.example.com", SVC_SMTP_FROM: "iam@example.com" },
  SVC_EXPORT_DIR: "a path: any name the file system takes",
  SVC_SMTP_FROM: { SVC_SMTP_FROM: "IAM" },
};

describe("every variable is validated", () => {
  it("has a row above, and a bad value stops loadConfig with a ConfigError naming the variable", () => {
    expect(Object.keys(BAD).sort()).toEqual(VARIABLES.map((v) => v.name).sort());
    for (const [name, bad] of Object.entries(BAD)) {
      if (typeof bad === "string") continue;
      expect(refusal(bad), name).toContain(name);
    }
  });

  it("SVC_DATABASE_REPLICA_URLS: each URL checked as DATABASE_URL is, the bad one named by its place", () => {
    const env = { DATABASE_URL: "postgres://primary/svc", SVC_MASTERKEY: KEY };
    expect(refusal({ ...env, SVC_DATABASE_REPLICA_URLS: "postgres://replica-a/svc, mysql://replica-b/svc" })).toContain("SVC_DATABASE_REPLICA_URLS (URL 2)");
    const config = loadConfig({ ...env, SVC_DATABASE_REPLICA_URLS: " postgres://replica-a/svc ,postgres://replica-b/svc" }, []);
    expect(config.databaseReplicas).toEqual({ urls: ["postgres://replica-a/svc", "postgres://replica-b/svc"], maxLagMs: 5000, waitMs: 20 });
  });

  it("SVC_CORS_ORIGINS: * or origins (http(s)://host[:port], no path), a bad entry named", () => {
    for (const entry of [
      "not a url",
      "app.example.com",
      "ftp://app.example.com",
      "https://app.example.com/path",
      "https://app.example.com/?x=1",
      "https://app.example.com#top",
      "https://*.example.com",
      "https://user@app.example.com",
      "null",
      "https://",
    ]) {
      const message = refusal({ SVC_CORS_ORIGINS: `https://good.example, ${entry}` });
      expect(message).toMatch(/^SVC_CORS_ORIGINS must be \* or comma-separated origins \(http\(s\):\/\/host\[:port\], no path/);
      expect(message).toContain(`got "${entry}"`);
    }
    expect(loadConfig({}, []).corsOrigins).toEqual(["*"]);
    expect(loadConfig({ SVC_CORS_ORIGINS: "*" }, []).corsOrigins).toEqual(["*"]);
    // Kept as a browser sends its Origin header: lower-case host, no default port, no trailing slash.
    expect(
      loadConfig({ SVC_CORS_ORIGINS: "https://App.Example.com:443/, http://127.0.0.1:3000,http://[::1]:8080 , http://localhost:80" }, []).corsOrigins,
    ).toEqual(["https://app.example.com", "http://127.0.0.1:3000", "http://[::1]:8080", "http://localhost"]);
  });

  it("SVC_CORS_ORIGINS from a --config file is named with its key there", () => {
    const file = join(dir, "cors.yaml");
    writeFileSync(file, "svc:\n  cors-origins:\n    - https://a.example\n    - https://a.example/app\n");
    expect(refusal({}, ["--config", file])).toMatch(/^SVC_CORS_ORIGINS \(svc\.cors-origins in .*cors\.yaml\) must be .*got "https:\/\/a\.example\/app"$/);
  });

  it("booleans take true/false and on/off in any case, nothing else", () => {
    for (const name of ["SVC_EXTERNAL_SECURE", "SVC_METRICS", "SVC_IDP_INSECURE_HTTP"] as const) {
      const read = (value: string) => {
        const c = loadConfig({ [name]: value }, []);
        return { SVC_EXTERNAL_SECURE: c.externalSecure, SVC_METRICS: c.metrics, SVC_IDP_INSECURE_HTTP: c.idpInsecureHttp }[name];
      };
      for (const yes of ["true", "TRUE", "on", "On"]) expect(read(yes), `${name}=${yes}`).toBe(true);
      for (const no of ["false", "False", "off", "OFF"]) expect(read(no), `${name}=${no}`).toBe(false);
      for (const bad of ["1", "0", "yes", "no", "y", "enabled", " true"]) {
        expect(refusal({ [name]: bad })).toBe(`${name} must be true or false (or on, off), got "${bad}"`);
      }
    }
  });

  it("SVC_HOST: an IP address or a host name", () => {
    for (const host of ["0.0.0.0", "::", "127.0.0.1", "::1", "localhost", "svc.internal"]) expect(loadConfig({ SVC_HOST: host }, []).host).toBe(host);
    for (const bad of ["0.0.0.0:8080", "[::1]", "http://localhost", "my host", "-x"]) {
      expect(refusal({ SVC_HOST: bad })).toMatch(new RegExp(`^SVC_HOST must be an IP address .*got "${bad.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}"$`));
    }
  });

  it("SVC_EXTERNAL_DOMAIN: a host name or an IPv4 address, without scheme, port or path", () => {
    for (const domain of ["localhost", "Auth.Example.com", "127.0.0.1", "xn--bcher-kva.example"]) {
      expect(loadConfig({ SVC_EXTERNAL_DOMAIN: domain }, []).externalDomain).toBe(domain);
    }
    for (const bad of ["https://id.example.com", "id.example.com:8443", "id.example.com/iam", "::1", "id_example.com", "id.example.com."]) {
      const message = refusal({ SVC_EXTERNAL_DOMAIN: bad });
      expect(message).toMatch(/^SVC_EXTERNAL_DOMAIN must be a host name/);
      expect(message).toContain(`got "${bad}"`);
    }
  });

  it("the first instance's admin username and organisation name follow the API's rules", () => {
    expect(loadConfig({ SVC_FIRSTINSTANCE_ADMIN_USERNAME: "root@example.com" }, []).firstInstanceAdminUsername).toBe("root@example.com");
    for (const bad of ["the admin", "a\tb", "x".repeat(201)]) {
      expect(refusal({ SVC_FIRSTINSTANCE_ADMIN_USERNAME: bad })).toMatch(/^SVC_FIRSTINSTANCE_ADMIN_USERNAME must be 1 to 200 characters without white space/);
    }
    expect(loadConfig({ SVC_FIRSTINSTANCE_ORG_NAME: "ACME Corp." }, []).firstInstanceOrgName).toBe("ACME Corp.");
    for (const bad of ["   ", "ACME\nEvil", "x".repeat(201)]) {
      expect(refusal({ SVC_FIRSTINSTANCE_ORG_NAME: bad })).toMatch(/^SVC_FIRSTINSTANCE_ORG_NAME must be 1 to 200 characters on one line/);
    }
  });

  it("SVC_SMTP_FROM: an address or Name <address>, one line, checked even before SVC_SMTP_URL is set", () => {
    const url = "smtp://mail.example.com";
    for (const from of ["iam@example.com", "IAM System <noreply@system.example>", "<noreply@example.com>", '"IAM, Ops" <ops@example.com>']) {
      expect(loadConfig({ SVC_SMTP_URL: url, SVC_SMTP_FROM: from }, []).smtp).toEqual({ url, from });
    }
    for (const bad of ["IAM", "IAM <iam>", "iam@", "@example.com", "a b@example.com", "IAM <a@example.com", "a@example.com>", "a@-example.com"]) {
      expect(refusal({ SVC_SMTP_URL: url, SVC_SMTP_FROM: bad })).toMatch(/^SVC_SMTP_FROM must be an address or "Name <address>"/);
      expect(refusal({ SVC_SMTP_FROM: bad })).toMatch(/^SVC_SMTP_FROM must be/);
    }
    expect(refusal({ SVC_SMTP_URL: url, SVC_SMTP_FROM: "iam@example.com\r\nBcc: all@example.com" })).toBe(
      "SVC_SMTP_FROM must be one line without control characters",
    );
  });
});

describe("--help", () => {
  it("keeps every line within 100 columns and still lists every variable, command and option", async () => {
    const r = await runCli(["--help"]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split("\n");
    const long = lines.filter((l) => l.length > 100);
    expect(long, `lines longer than 100 columns:\n${long.join("\n")}`).toEqual([]);
    expect(lines.filter((l) => l !== l.trimEnd())).toEqual([]);
    for (const v of VARIABLES) {
      const row = lines.findIndex((l) => l.startsWith(`  ${v.name} `));
      expect(row, `${v.name} has no row`).toBeGreaterThanOrEqual(0);
      // The meaning follows whole: the row's words and its continuation lines' words in order.
      const rest = lines.slice(row + 1).findIndex((l) => !/^ {44}\S/.test(l));
      const text = lines
        .slice(row, row + 1 + rest)
        .join(" ")
        .replace(/\s+/g, " ");
      expect(text).toContain(`${v.meaning.replace(/\s+/g, " ")}`);
    }
    for (const c of ["start", "migrate", "recover", "projections"]) expect(r.stdout).toMatch(new RegExp(`^ {2}${c} `, "m"));
    for (const o of ["--config <file>", "-h, --help"]) expect(r.stdout).toContain(`  ${o} `);
  });
});
