import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { projectRoot } from "../../src/storage/paths.js";
import { databaseEnv, freshPostgresDatabase, testDb } from "../support/database.js";
import { serverArgs } from "../support/process.js";

/**
 * The compiled build (docs/drafts/build.md): `npm run build` writes dist/, which runs with plain node (no
 * tsx, no TypeScript at run time); `svc` (bin/svc.js) serves, migrates and prints its usage from it; `npm start`
 * rebuilds a stale dist/ before it serves. What makes dist/ stale is tested on a small project in a temporary
 * folder (scripts/build.mjs's `root`), so that no source of this checkout is touched.
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
    Object.assign(env, databaseEnv(pgdb));
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

// Building does not depend on the database: the two tests that build (each a minute of CPU) run in the embedded
// project only; the postgres project serves and migrates from the build.
const building = testDb === "embedded";

describe("the compiled build", () => {
  it.runIf(building)("npm run build writes dist/, which imports neither tsx nor a .ts file", { timeout: 120_000 }, () => {
    const r = spawnSync("npm", ["run", "build", "--silent"], { cwd: projectRoot, encoding: "utf8", timeout: 110_000 });
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
    serverArgs(); // dist/ built if stale
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
    const help = spawnSync(process.execPath, ["bin/svc.js", "--help"], { cwd: projectRoot, env, encoding: "utf8", timeout: 50_000 });
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

  it.runIf(building)("npm start builds a stale dist/ first, then serves it", { timeout: 120_000 }, async () => {
    if (!existsSync(stamp)) spawnSync("npm", ["run", "build", "--silent"], { cwd: projectRoot });
    // stale: built from other sources (the stamp's digest replaced rather than a source touched)
    writeFileSync(stamp, "0000 (set by build.test.ts)\n");
    const env = await cleanEnv();
    const server = await serve("npm", ["start", "--silent"], env);
    expect(server.output()).toMatch(/dist\/ is stale: building/);
    expect(readFileSync(stamp, "utf8")).toMatch(/^[0-9a-f]{64}\nbuilt \S+ from \d+ files\n$/);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});

/** scripts/build.mjs's functions run in a child process on another root (no TypeScript types for the .mjs here). */
const buildScript = pathToFileURL(join(projectRoot, "scripts", "build.mjs")).href;
function buildModule(root: string, call: "staleness" | "ensureBuilt"): { status: number | null; out: string; err: string } {
  const code = `import * as b from ${JSON.stringify(buildScript)};
const r = ${call === "staleness" ? `b.staleness(${JSON.stringify(root)})` : `b.ensureBuilt({ root: ${JSON.stringify(root)} })`};
process.stdout.write(String(r ?? "current"));`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", code], { env: { ...process.env, NODE_OPTIONS: "" }, encoding: "utf8", timeout: 50_000 });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

describe("when dist/ is stale (scripts/build.mjs on a small project in a temporary folder)", () => {
  const old = new Date("2001-02-03T04:05:06Z");

  /** A project with the layout the build reads (src/, gen/, scripts/svc-migrate.ts, both tsconfigs), built once. */
  function project(): string {
    const dir = mkdtempSync(join(tmpdir(), "svc-stale-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const write = (rel: string, text: string) => {
      mkdirSync(join(dir, rel, ".."), { recursive: true });
      writeFileSync(join(dir, rel), text);
    };
    write("package.json", '{ "type": "module" }\n');
    write("tsconfig.json", JSON.stringify({ compilerOptions: { target: "ES2022", module: "NodeNext", strict: true, rootDir: "." } }));
    write(
      "tsconfig.build.json",
      JSON.stringify({ extends: "./tsconfig.json", compilerOptions: { outDir: "dist" }, include: ["src", "gen", "scripts/svc-migrate.ts"] }),
    );
    write("src/main.ts", 'import { g } from "../gen/g.js";\nexport const main: number = g + 1;\n');
    write("gen/g.ts", "export const g = 1;\n");
    write("scripts/svc-migrate.ts", "export const migrate = 2;\n");
    const first = buildModule(dir, "ensureBuilt");
    expect(first.status, first.err).toBe(0);
    expect(first.err).toMatch(/dist\/ is missing: building/);
    expect(existsSync(join(dir, "dist", "src", "main.js"))).toBe(true);
    expect(buildModule(dir, "staleness").out).toBe("current");
    return dir;
  }

  /** Stale now; ensureBuilt rebuilds, and then it is current. */
  function rebuilds(dir: string) {
    expect(buildModule(dir, "staleness").out).toBe("stale");
    const r = buildModule(dir, "ensureBuilt");
    expect(r.status, r.err).toBe(0);
    expect(r.err).toMatch(/dist\/ is stale: building/);
    expect(buildModule(dir, "staleness").out).toBe("current");
  }

  it("a source changed but with an mtime older than the build (rsync -a, cp -p, a tarball) is rebuilt", { timeout: 120_000 }, () => {
    const dir = project();
    const main = join(dir, "src", "main.ts");
    writeFileSync(main, `${readFileSync(main, "utf8")}export const changedAfterBuild = "marker-1";\n`);
    utimesSync(main, old, old);
    rebuilds(dir);
    expect(readFileSync(join(dir, "dist", "src", "main.js"), "utf8")).toContain("marker-1");
    // the same size, and an mtime still older than the build but another one: that counts too
    writeFileSync(main, readFileSync(main, "utf8").replace("marker-1", "marker-2"));
    const older = new Date(old.getTime() + 1000);
    utimesSync(main, older, older);
    rebuilds(dir);
    expect(readFileSync(join(dir, "dist", "src", "main.js"), "utf8")).toContain("marker-2");
  });

  it("a file added (with an old mtime) or removed is rebuilt; without sources dist/ is taken as it is", { timeout: 120_000 }, () => {
    const dir = project();
    const added = join(dir, "gen", "added.ts");
    writeFileSync(added, "export const added = 3;\n");
    utimesSync(added, old, old);
    utimesSync(join(dir, "gen"), old, old);
    rebuilds(dir);
    expect(existsSync(join(dir, "dist", "gen", "added.js"))).toBe(true);
    rmSync(added);
    utimesSync(join(dir, "gen"), old, old);
    rebuilds(dir);
    expect(existsSync(join(dir, "dist", "gen", "added.js"))).toBe(false);
    // an installed build: dist/ and none of the sources
    for (const s of ["src", "gen", "scripts", "tsconfig.json", "tsconfig.build.json"]) rmSync(join(dir, s), { recursive: true });
    expect(buildModule(dir, "staleness").out).toBe("current");
    const r = buildModule(dir, "ensureBuilt");
    expect([r.status, r.err]).toEqual([0, ""]);
  });
});
