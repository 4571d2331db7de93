import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseArgs, usage } from "../../src/config/cli.js";
import { ConfigError, loadConfig } from "../../src/config/config.js";
import { StartupError } from "../../src/config/startup-error.js";
import { VARIABLES } from "../../src/config/variables.js";
import { runCli, startCli, type CliResult } from "../support/cli.js";

const KEY = "0123456789abcdef0123456789abcdef";
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "svc-startup-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A YAML file in the test's directory. */
function yamlFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** The message loadConfig throws, as a ConfigError. */
function configError(env: Record<string, string>, argv: string[] = []): string {
  try {
    loadConfig(env, argv);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("loadConfig accepted it");
}

/** The contract for every start-up failure: exit code 1, exactly one line on stderr, naming what is wrong. */
function expectOneLine(r: CliResult, ...mentions: (string | RegExp)[]): string {
  expect(r.code, r.stderr).toBe(1);
  expect(r.errorLines, r.stderr).toHaveLength(1);
  const line = r.errorLines[0]!;
  expect(line).not.toMatch(/^\s+at /);
  for (const m of mentions) expect(line).toMatch(m);
  return line;
}

/** A port that was free a moment ago. */
async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

describe("loadConfig", () => {
  it("takes every default from the one variable list", () => {
    const c = loadConfig({}, []);
    const defaults = Object.fromEntries(VARIABLES.map((v) => [v.name, "default" in v ? v.default : undefined]));
    expect(String(c.port)).toBe(defaults.SVC_PORT);
    expect(c.externalPort).toBe(c.port);
    expect(c.host).toBe(defaults.SVC_HOST);
    expect(c.logLevel).toBe(defaults.SVC_LOG_LEVEL);
    expect(String(c.oidc.signingKeyS)).toBe(defaults.SVC_OIDC_SIGNING_KEY_LIFETIME);
    expect(c.databaseUrl).toBeUndefined();
    expect(c.masterKey).toBeUndefined();
    expect(c.firstInstancePatPath).toBe(join(c.dataDir, "admin.pat"));
  });

  it("accepts PostgreSQL URLs with a host or a socket directory, and refuses anything else naming DATABASE_URL", () => {
    for (const url of ["postgres://u:p@db:5432/svc", "postgresql://db/svc?sslmode=require", "postgres:///svc?host=/var/run/postgresql"]) {
      expect(loadConfig({ DATABASE_URL: url, SVC_MASTERKEY: KEY }, []).databaseUrl).toBe(url);
    }
    expect(configError({ DATABASE_URL: "notaurl", SVC_MASTERKEY: KEY })).toMatch(/^DATABASE_URL is not a valid URL/);
    expect(configError({ DATABASE_URL: "mysql://x", SVC_MASTERKEY: KEY })).toMatch(/^DATABASE_URL must be a postgres:\/\/ .* not mysql:/);
    expect(configError({ DATABASE_URL: "postgres:///svc", SVC_MASTERKEY: KEY })).toMatch(/^DATABASE_URL names no server/);
    // the value may hold a password: never echoed
    expect(configError({ DATABASE_URL: "postgres://u:s3cret@db:99999/x", SVC_MASTERKEY: KEY })).not.toContain("s3cret");
  });

  it("requires a 32-byte SVC_MASTERKEY with DATABASE_URL", () => {
    expect(configError({ DATABASE_URL: "postgres://db/svc" })).toMatch(/^SVC_MASTERKEY is required when DATABASE_URL is set/);
    expect(configError({ DATABASE_URL: "postgres://db/svc", SVC_MASTERKEY: "short" })).toMatch(/^SVC_MASTERKEY must be exactly 32 bytes/);
    expect(configError({ SVC_MASTERKEY: "short" })).toMatch(/^SVC_MASTERKEY must be exactly 32 bytes/);
  });

  it("reads flat and nested YAML, camelCase and kebab-case keys and lists; the environment wins", () => {
    const flat = yamlFile("flat.yaml", `SVC_PORT: 9001\nDATABASE_URL: postgres://db/svc\nSVC_MASTERKEY: ${KEY}\n`);
    expect(loadConfig({}, ["--config", flat])).toMatchObject({ port: 9001, databaseUrl: "postgres://db/svc" });
    const nested = yamlFile(
      "nested.yaml",
      [
        "svc:",
        "  port: 9002",
        "  external: {domain: id.example.com, secure: true}",
        "  oidc:",
        "    accessTokenLifetime: 60",
        "  cors-origins: [https://a.example, https://b.example]",
        `  masterkey: ${KEY}`,
        "  firstinstance: {admin: {username: root}}",
        "  log_level:", // no value: unset, the default applies
        "database: {url: 'postgresql://db/svc'}",
      ].join("\n"),
    );
    const c = loadConfig({}, ["--config", nested]);
    expect(c).toMatchObject({ port: 9002, externalPort: 9002, externalDomain: "id.example.com", externalSecure: true, databaseUrl: "postgresql://db/svc" });
    expect(c.oidc.accessTokenS).toBe(60);
    expect(c.corsOrigins).toEqual(["https://a.example", "https://b.example"]);
    expect(c.firstInstanceAdminUsername).toBe("root");
    expect(c.logLevel).toBe("info");
    expect(loadConfig({ SVC_PORT: "9100" }, [`--config=${nested}`]).port).toBe(9100);
    expect(loadConfig({ SVC_PORT: "" }, ["--config", nested]).port).toBe(9002); // empty is unset
    expect(loadConfig({}, ["--config", yamlFile("empty.yaml", "# nothing\n")]).port).toBe(8080);
  });

  it("refuses unknown keys naming them (with the closest variable), and names the file's key in value errors", () => {
    expect(configError({}, ["--config", yamlFile("typo.yaml", "svc:\n  prot: 9000\n")])).toMatch(
      /unknown key "svc\.prot" \(read as SVC_PROT\); did you mean SVC_PORT \(svc\.port\)\?$/,
    );
    expect(configError({}, ["--config", yamlFile("flat-typo.yaml", "SVC_EXTERNAL_DOMIAN: x\n")])).toMatch(
      /unknown key "SVC_EXTERNAL_DOMIAN"; did you mean SVC_EXTERNAL_DOMAIN\?$/,
    );
    expect(configError({}, ["--config", yamlFile("noprefix.yaml", "port: 1\n")])).toMatch(/did you mean SVC_PORT\?$/);
    expect(configError({}, ["--config", yamlFile("far.yaml", "colour: blue\n")])).toMatch(/unknown key "colour".*see --help/);
    expect(configError({}, ["--config", yamlFile("twice.yaml", "SVC_PORT: 1\nsvc: {port: 2}\n")])).toMatch(/SVC_PORT is set twice/);
    expect(configError({}, ["--config", yamlFile("badval.yaml", "svc: {port: abc}\n")])).toMatch(
      /^SVC_PORT \(svc\.port in .*badval\.yaml\) must be an integer/,
    );
    expect(configError({}, ["--config", yamlFile("obj.yaml", "svc: {port: [{a: 1}]}\n")])).toMatch(/"svc\.port" \(SVC_PORT\) must be a single value/);
  });

  it("reports a missing file, a directory, broken YAML and a non-mapping top level in one line each", () => {
    const messages = [
      configError({}, ["--config", join(dir, "nope.yaml")]),
      configError({}, ["--config", dir]),
      configError({}, ["--config", yamlFile("broken.yaml", "svc:\n  port: [1\n")]),
      configError({}, ["--config", yamlFile("list.yaml", "- a\n- b\n")]),
    ];
    expect(messages[0]).toMatch(/nope\.yaml: no such file$/);
    expect(messages[1]).toMatch(/is a directory/);
    expect(messages[2]).toMatch(/broken\.yaml: not valid YAML: .*line \d+/);
    expect(messages[3]).toMatch(/top level must be a mapping/);
    for (const m of messages) expect(m).not.toContain("\n");
  });

  it("ConfigError is a StartupError (main prints both as one line)", () => {
    expect(new ConfigError("x")).toBeInstanceOf(StartupError);
  });
});

describe("the command line", () => {
  it("knows start (default), migrate, --config and --help, and nothing else", () => {
    expect(parseArgs([])).toEqual({ command: "start", configFile: undefined, help: false });
    expect(parseArgs(["migrate", "--config", "a.yaml"])).toEqual({ command: "migrate", configFile: "a.yaml", help: false });
    expect(parseArgs(["-h"]).help).toBe(true);
    expect(() => parseArgs(["--config"])).toThrow(/--config needs a file name/);
    expect(() => parseArgs(["start", "migrate"])).toThrow(/one command at most/);
    expect(() => parseArgs(["constructor"])).toThrow(/unknown argument "constructor"/);
    expect(() => parseArgs(["--port=1"])).toThrow(/unknown option "--port=1"; run with --help/);
  });

  it("prints every variable with its default in the usage, and the README documents every variable", () => {
    const text = usage();
    const readme = readFileSync(join(import.meta.dirname, "..", "..", "README.md"), "utf8");
    for (const v of VARIABLES) {
      expect(text).toMatch(new RegExp(`^  ${v.name} +${("default" in v ? v.default : v.shown).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} `, "m"));
      expect(readme, `README lacks ${v.name}`).toContain(`| \`${v.name}\` |`);
    }
  });
});

describe("the process refuses bad start-up input in one line", () => {
  it.each([
    [{ DATABASE_URL: "notaurl", SVC_MASTERKEY: KEY }, /DATABASE_URL/],
    [{ DATABASE_URL: "mysql://x", SVC_MASTERKEY: KEY }, /DATABASE_URL .*mysql/],
    [{ DATABASE_URL: "postgres://127.0.0.1:5432/postgres" }, /SVC_MASTERKEY is required when DATABASE_URL is set/],
    [{ SVC_PORT: "abc" }, /SVC_PORT must be an integer/],
  ])("%o", async (env, mention) => {
    const dataDir = join(dir, `never-${randomBytes(4).toString("hex")}`);
    expectOneLine(await runCli([], { ...env, SVC_DATA_DIR: dataDir }), /^configuration: /, mention);
    expect(existsSync(dataDir)).toBe(false);
  });

  it("a busy port, at once and without creating the data directory", async () => {
    const busy = net.createServer();
    await new Promise<void>((r) => busy.listen(0, "127.0.0.1", r));
    const port = (busy.address() as net.AddressInfo).port;
    const dataDir = join(dir, "busy-port-data");
    try {
      const line = expectOneLine(await runCli([], { SVC_PORT: String(port), SVC_HOST: "127.0.0.1", SVC_DATA_DIR: dataDir }));
      expect(line).toBe(`cannot start: SVC_PORT ${port} on 127.0.0.1 is already in use: stop the other process or choose another SVC_PORT`);
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      await new Promise((r) => busy.close(r));
    }
  });

  it("an unreachable DATABASE_URL, without its password", async () => {
    const r = await runCli([], { DATABASE_URL: "postgres://svc:s3cret@127.0.0.1:1/svc", SVC_MASTERKEY: KEY, SVC_DATA_DIR: join(dir, "unreachable") });
    const line = expectOneLine(r, /^cannot start: DATABASE_URL postgres:\/\/svc:\*\*\*@127\.0\.0\.1:1\/svc: .*ECONNREFUSED/);
    expect(line).not.toContain("s3cret");
  });

  it("a misspelled key and a missing file given with --config", async () => {
    const typo = yamlFile("cli-typo.yaml", "svc:\n  data-dir: /tmp/x\n  prot: 9000\n");
    expectOneLine(await runCli(["--config", typo]), /^configuration: --config .*cli-typo\.yaml: unknown key "svc\.prot"/, /SVC_PORT/);
    expectOneLine(await runCli(["--config", join(dir, "missing.yaml")]), /^configuration: --config .*missing\.yaml: no such file$/);
  });

  it("an unknown argument, with a hint to --help", async () => {
    expectOneLine(await runCli(["--verbose"]), /^configuration: unknown option "--verbose"; run with --help for usage$/);
    expectOneLine(await runCli(["serve"]), /unknown argument "serve"/);
  });

  it("--help and -h print the usage and exit 0 without starting anything", async () => {
    for (const flag of ["--help", "-h"]) {
      const r = await runCli([flag], { SVC_PORT: "abc" }); // not even the configuration is read
      expect(r.code).toBe(0);
      expect(r.stderr).toBe("");
      expect(r.stdout).toMatch(/^Usage: /);
      expect(r.stdout).toMatch(/^ {2}SVC_PORT +8080 /m);
      expect(r.stdout).toMatch(/^ {2}migrate /m);
    }
  });
});

/** A fresh database on the local PostgreSQL server (TEST_DATABASE_URL, else the CI default), or undefined when none runs. */
async function freshDatabase(): Promise<{ url: string; drop: () => Promise<void> } | undefined> {
  const base = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const admin = new pg.Client({ connectionString: base, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch {
    return undefined;
  }
  const name = `svc_startup_${randomBytes(6).toString("hex")}`;
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  const drop = async () => {
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
  };
  return { url: url.toString(), drop };
}

describe("a nested --config file", () => {
  it("starts the server on the port and data directory it names", async (ctx) => {
    const db = await freshDatabase();
    if (!db) return ctx.skip("no PostgreSQL server at TEST_DATABASE_URL or 127.0.0.1:5432");
    const port = await freePort();
    const dataDir = join(dir, "from-yaml");
    const file = yamlFile(
      "works.yaml",
      [
        "svc:",
        `  port: ${port}`,
        "  host: 127.0.0.1",
        `  data_dir: ${dataDir}`,
        `  masterkey: ${KEY}`,
        "  shutdownGraceMs: 2000",
        "database:",
        `  url: ${db.url}`,
      ].join("\n"),
    );
    try {
      const p = await startCli(["--config", file]);
      try {
        expect(p.url).toMatch(new RegExp(`^http://(localhost|127\\.0\\.0\\.1):${port}$`));
        const res = await fetch(`http://127.0.0.1:${port}/healthz`);
        expect(res.status).toBe(200);
        expect(existsSync(join(dataDir, "admin.pat"))).toBe(true);
      } finally {
        p.child.kill("SIGTERM");
        expect(await p.exited).toBe(0);
      }
    } finally {
      await db.drop();
    }
  });
});
