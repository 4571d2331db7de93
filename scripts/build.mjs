// `npm run build`: compiles src/, gen/ and scripts/svc-migrate.ts to dist/ with tsc (tsconfig.build.json), so
// that the server runs as plain JavaScript (no tsx, no TypeScript at run time). `ensureBuilt()` is what
// `npm start`, `npm run migrate` and the bins call first: it builds when dist/ is missing or older than a source
// it compiles (docs/drafts/build.md). Plain JavaScript itself, since it runs before anything is compiled.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const dist = join(root, "dist");
/** Written at the end of a build with the time the build started: a source changed during the build is newer. */
const stamp = join(dist, ".build-stamp");
/** What the build reads: a change to any of them (or a file added or removed: its folder's mtime) makes dist/ stale. */
const sources = ["src", "gen", "scripts/svc-migrate.ts", "tsconfig.build.json", "tsconfig.json"];

function newestMtime(path) {
  let st;
  try {
    st = statSync(path);
  } catch {
    return 0;
  }
  let newest = st.mtimeMs;
  if (st.isDirectory()) for (const name of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, name)));
  return newest;
}

/** Why dist/ must be built ("missing", "stale"), or undefined when it is current or there are no sources (an installed build). */
export function staleness() {
  if (!existsSync(stamp)) return "missing";
  const built = statSync(stamp).mtimeMs;
  const newest = Math.max(...sources.map((s) => newestMtime(join(root, s))));
  return newest > built ? "stale" : undefined;
}

/** Compiles into a fresh folder and swaps it in, so that a failed build leaves the previous dist/ in place. */
export function build({ quiet = false } = {}) {
  let tsc;
  try {
    tsc = join(dirname(createRequire(import.meta.url).resolve("typescript/package.json")), "bin", "tsc");
  } catch {
    throw new Error("TypeScript is not installed (a production install?): run `npm ci` and `npm run build` where the dev dependencies are");
  }
  const started = new Date();
  const out = join(root, `dist.build-${process.pid}`);
  rmSync(out, { recursive: true, force: true });
  const r = spawnSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json"), "--outDir", out], { cwd: root, stdio: "inherit" });
  if (r.status !== 0) {
    rmSync(out, { recursive: true, force: true });
    throw new Error(`the build failed (tsc exited with ${r.status ?? r.signal}); dist/ is unchanged`);
  }
  const outStamp = join(out, ".build-stamp");
  writeFileSync(outStamp, `${started.toISOString()}\n`);
  utimesSync(outStamp, started, started);
  const old = join(root, `dist.old-${process.pid}`);
  if (existsSync(dist)) renameSync(dist, old);
  try {
    renameSync(out, dist);
  } catch (err) {
    // another build (a parallel `npm start`) swapped its own in first: that one is as fresh
    if (!existsSync(stamp)) throw err;
    rmSync(out, { recursive: true, force: true });
  }
  rmSync(old, { recursive: true, force: true });
  if (!quiet) process.stderr.write(`built dist/ in ${((Date.now() - started.getTime()) / 1000).toFixed(1)} s\n`);
}

/**
 * Builds when needed. Without TypeScript (a production install) a stale dist/ is run as it is, with a warning;
 * a missing one is an error.
 */
export function ensureBuilt() {
  const why = staleness();
  if (!why) return;
  process.stderr.write(`dist/ is ${why}: building (npm run build)\n`);
  try {
    build();
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
