import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { projectRoot } from "../../src/storage/paths.js";
import { freshPostgresDatabase, TEST_MASTERKEY, testDb } from "../support/database.js";

/**
 * The compiled build (docs/drafts/build.md): `npm run build` writes dist/, which runs with plain node (no
 * tsx, no TypeScript at run time); `svc` (bin/svc.js) serves, migrates and prints its usage from it; `npm start`
 * rebuilds a stale dist/ before it serves.
 */
const dist = join(projectRoot, "dist");
const stamp = join(dist, ".build-stamp");
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** An environment without tsx or any other preloaded hook, with a fresh data directory and database. */
async function cleanEnv(): Promise<NodeJS.ProcessEnv> {
  const dir = mkdtempSync(join(tmpdir(), "svc-build-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: "", SVC_PORT: "0", SVC_DATA_DIR: dir, SVC_LOG_LEVEL: "warn" };
  if (testDb === "postgres") {
    const pgdb = await freshPostgresDatabase();
    cleanups.push(pgdb.drop);
    Object.assign(env, { DATABASE_URL: pgdb.url, SVC_MASTERKEY: TEST_MASTERKEY });
  }
  return env;
}

/** Starts a command and resolves with its URL once it prints the ready line; stopped with SIGTERM after the test. */
async function serve(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawn(command, args, { cwd: projectRoot, env, stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready within 90 s:\n${out}`)), 90_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!.replace("localhost", "127.0.0.1"));
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before it was ready:\n${out}`));
    });
  });
  return { child, url, output: () => out };
}

/** Every file under dir. */
function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));
}

describe("the compiled build", () => {
  it("npm run build writes dist/, which imports neither tsx nor a .ts file", { timeout: 120_000 }, () => {
    const r = spawnSync("npm", ["run", "build", "--silent"], { cwd: projectRoot, encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    for (const f of ["src/main.js", "scripts/svc-migrate.js", "gen/prisma/client.js", ".build-stamp"]) expect(existsSync(join(dist, f)), f).toBe(true);
    const js = files(dist).filter((f) => f.endsWith(".js"));
    expect(js.length).toBeGreaterThan(100);
    expect(files(dist).filter((f) => f.endsWith(".ts"))).toEqual([]);
    for (const f of js) {
      const text = readFileSync(f, "utf8");
      const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*)["']([^"']+)["']/g)].map((m) => m[1]!);
      const bad = specifiers.filter((s) => /^tsx(\/|$)/.test(s) || /\.[mc]?ts$/.test(s));
      expect(bad, f).toEqual([]);
    }
  });

  it("serves from `node dist/src/main.js` without tsx: /healthz and the OIDC discovery", { timeout: 120_000 }, async () => {
    const env = await cleanEnv();
    const server = await serve(process.execPath, ["dist/src/main.js"], env);
    expect(readFileSync(`/proc/${server.child.pid}/cmdline`, "utf8").split("\0")).not.toContain("tsx");
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    const discovery = await fetch(`${server.url}/.well-known/openid-configuration`);
    expect(discovery.status).toBe(200);
    const doc = (await discovery.json()) as { issuer: string; token_endpoint: string };
    // the issuer of the host asked (127.0.0.1 is one of the first instance's domains)
    expect(doc.issuer).toBe(server.url);
    expect(doc.token_endpoint).toBe(`${doc.issuer}/oauth/v2/token`);
  });

  it("svc --help prints the usage; svc migrate applies the migrations and exits 0", { timeout: 120_000 }, async () => {
    const pkg = JSON.parse(readFileSync(join(projectRoot, "package.json"), "utf8")) as { bin: Record<string, string>; dependencies: Record<string, string> };
    expect(pkg.bin.svc).toBe("bin/svc.js");
    expect(pkg.dependencies.tsx, "tsx is not needed at run time").toBeUndefined();
    const env = await cleanEnv();
    const help = spawnSync(process.execPath, ["bin/svc.js", "--help"], { cwd: projectRoot, env, encoding: "utf8" });
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^Usage: npx svc \[start\|migrate\]/);
    expect(help.stdout).toContain("recover");
    const migrate = () => spawnSync(process.execPath, ["bin/svc.js", "migrate"], { cwd: projectRoot, env, encoding: "utf8", timeout: 90_000 });
    const first = migrate();
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/applied .*_init/);
    const second = migrate();
    expect(second.status, second.stderr).toBe(0);
    expect(second.stdout).toContain("the database is up to date");
  });

  it("npm start builds a stale dist/ first, then serves it", { timeout: 120_000 }, async () => {
    if (!existsSync(stamp)) spawnSync("npm", ["run", "build", "--silent"], { cwd: projectRoot });
    // stale: a source newer than the build (the stamp set back rather than a source touched)
    const old = new Date(Date.now() - 24 * 3600 * 1000 * 365 * 30);
    utimesSync(stamp, old, old);
    const env = await cleanEnv();
    const server = await serve("npm", ["start", "--silent"], env);
    expect(server.output()).toMatch(/dist\/ is stale: building/);
    expect(statSync(stamp).mtimeMs).toBeGreaterThan(old.getTime() + 1000);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});
