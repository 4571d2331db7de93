// `npm run build`: compiles src/, gen/ and scripts/svc-migrate.ts to dist/ with tsc (tsconfig.build.json), so
// that the server runs as plain JavaScript (no tsx, no TypeScript at run time), and bundles the admin console
// (console/, with Vite) into dist/console. `ensureBuilt()` is what
// `npm start`, `npm run migrate` and the bins call first: it builds when dist/ is missing or was built from other
// sources than those here (docs/decisions.md, "Build: When `npm start` builds"). Plain JavaScript itself, since
// it runs before anything is compiled.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const dist = join(root, "dist");
/** What the build reads (relative to the root): every file under them counts, added and removed ones too. */
const sources = ["src", "gen", "console", "scripts/svc-migrate.ts", "tsconfig.build.json", "tsconfig.json"];
/** dist/.build-stamp: the digest of the sources as they were when the build started, then a line for people. */
const stampOf = (at) => join(at, "dist", ".build-stamp");

/** Appends "path size mtime" of every file at rel (a file or a folder, walked in name order) to lines. */
function list(at, rel, lines) {
  let st;
  try {
    st = statSync(join(at, rel));
  } catch {
    return;
  }
  if (!st.isDirectory()) {
    lines.push(`${rel}\0${st.size}\0${st.mtimeMs}`);
    return;
  }
  for (const e of readdirSync(join(at, rel), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const path = `${rel}/${e.name}`;
    if (e.isDirectory()) list(at, path, lines);
    else if (e.isFile()) {
      const f = statSync(join(at, path));
      lines.push(`${path}\0${f.size}\0${f.mtimeMs}`);
    } else list(at, path, lines); // a link: followed
  }
}

/**
 * The sources' digest: sha256 of (relative path, size, mtime in ms) of every file the build compiles, and their
 * count; undefined when there is none (an installed build). Not "a file newer than the build": sources copied
 * with their own older mtimes (rsync -a, cp -p, a tarball, a backup) and an edit within the file system's
 * timestamp granularity of the build's start change the digest all the same.
 */
export function sourceDigest(at = root) {
  const lines = [];
  for (const s of sources) list(at, s, lines);
  if (lines.length === 0) return undefined;
  return { digest: createHash("sha256").update(lines.join("\n")).digest("hex"), files: lines.length };
}

/** Why dist/ must be built ("missing", "stale"), or undefined when it is current or there are no sources (an installed build). */
export function staleness(at = root) {
  const stamp = stampOf(at);
  if (!existsSync(stamp)) return "missing";
  const now = sourceDigest(at);
  if (!now) return undefined;
  const built = readFileSync(stamp, "utf8").split("\n", 1)[0];
  return built === now.digest ? undefined : "stale";
}

/** Compiles into a fresh folder and swaps it in, so that a failed build leaves the previous dist/ in place. */
export function build({ quiet = false, root: at = root } = {}) {
  let tsc;
  try {
    tsc = join(dirname(createRequire(import.meta.url).resolve("typescript/package.json")), "bin", "tsc");
  } catch {
    throw new Error("TypeScript is not installed (a production install?): run `npm ci` and `npm run build` where the dev dependencies are");
  }
  const started = new Date();
  // before tsc reads anything: a source changed from here on makes the next check stale
  const from = sourceDigest(at);
  const out = join(at, `dist.build-${process.pid}`);
  rmSync(out, { recursive: true, force: true });
  const r = spawnSync(process.execPath, [tsc, "-p", join(at, "tsconfig.build.json"), "--outDir", out], { cwd: at, stdio: "inherit" });
  if (r.status !== 0) {
    rmSync(out, { recursive: true, force: true });
    throw new Error(`the build failed (tsc exited with ${r.status ?? r.signal}); dist/ is unchanged`);
  }
  try {
    buildConsole(at, join(out, "console"));
  } catch (err) {
    rmSync(out, { recursive: true, force: true });
    throw err;
  }
  writeFileSync(join(out, ".build-stamp"), `${from?.digest ?? "no sources"}\nbuilt ${started.toISOString()} from ${from?.files ?? 0} files\n`);
  const target = join(at, "dist");
  const old = join(at, `dist.old-${process.pid}`);
  if (existsSync(target)) renameSync(target, old);
  try {
    renameSync(out, target);
  } catch (err) {
    // another build (a parallel `npm start`) swapped its own in first: that one is as fresh
    if (!existsSync(stampOf(at))) throw err;
    rmSync(out, { recursive: true, force: true });
  }
  rmSync(old, { recursive: true, force: true });
  if (!quiet) process.stderr.write(`built dist/ in ${((Date.now() - started.getTime()) / 1000).toFixed(1)} s\n`);
}

/** The admin console's production bundle (console/vite.config.ts) into outDir. */
export function buildConsole(at = root, outDir = join(at, "dist", "console")) {
  const config = join(at, "console", "vite.config.ts");
  if (!existsSync(config)) return; // a checkout without the console (the build's own tests)
  let vite;
  try {
    vite = join(dirname(createRequire(join(at, "package.json")).resolve("vite/package.json")), "bin", "vite.js");
  } catch {
    throw new Error("Vite is not installed (a production install?): run `npm ci` and `npm run build` where the dev dependencies are");
  }
  const r = spawnSync(process.execPath, [vite, "build", "--config", config, "--outDir", outDir, "--emptyOutDir", "--logLevel", "warn"], {
    cwd: at,
    stdio: "inherit",
  });
  if (r.status !== 0) throw new Error(`the console's build failed (vite exited with ${r.status ?? r.signal}); dist/ is unchanged`);
}

/**
 * Builds when needed. Without TypeScript (a production install) a stale dist/ is run as it is, with a warning;
 * a missing one is an error. `root`: another checkout (the tests' copies); this one by default.
 */
export function ensureBuilt({ root: at = root } = {}) {
  const why = staleness(at);
  if (!why) return;
  process.stderr.write(`dist/ is ${why}: building (npm run build)\n`);
  try {
    build({ root: at });
  } catch (err) {
    if (why === "stale" && /not installed/.test(err.message)) {
      process.stderr.write(`warning: ${err.message}; running the existing dist/\n`);
      return;
    }
    throw err;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    build();
  } catch (err) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
}
