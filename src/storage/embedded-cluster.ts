import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import {
  chmodSync,
  existsSync,
  lchownSync,
  lstatSync,
  readdirSync,
  type Stats,
  mkdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import { StartupError } from "../config/startup-error.js";
import type { RunAs } from "./embedded-binaries.js";

/**
 * Where a root process keeps what PostgreSQL's user must reach but cannot where the checkout is (a clone under
 * /root): `clusters/<id>/pg` (a cluster whose data directory is unreachable; `<data dir>/pg` links to it) and
 * `binaries/<key>/` (a copy of the PostgreSQL programs). Owned by root, not writable by anyone else.
 */
export const SYSTEM_DIR = "/var/lib/svc-iam";
/** In `clusters/<id>/`: the real path of the data directory the cluster belongs to (one line). */
const OWNER_FILE = "data-dir";

/**
 * The directory of the cluster of `pgPath` (`<data dir>/pg`): that directory, or where it leads when it is a
 * symbolic link (the link's target even when that does not exist yet). Pure, so that a client (`recover`)
 * finds the socket of a running server where the server put it.
 */
export function clusterDirOf(pgPath: string): string {
  try {
    if (!lstatSync(pgPath).isSymbolicLink()) return pgPath;
  } catch {
    return pgPath;
  }
  const target = resolve(dirname(pgPath), readlinkSync(pgPath));
  try {
    return realpathSync(target);
  } catch {
    return target;
  }
}

/**
 * Decides where the cluster of `dataDir` lives and returns its directory:
 * - `<data dir>/pg`, as always when not root, and as root when PostgreSQL's user can reach the data directory
 *   (the data directory gets o+x for that, as before);
 * - where `<data dir>/pg` leads, when it is a symbolic link;
 * - as root when PostgreSQL's user cannot reach the data directory (a clone under /root): a new directory
 *   `SYSTEM_DIR/clusters/<hash of the data dir's path>-<random>/pg`, and `<data dir>/pg` becomes a symbolic link
 *   to it. A cluster already in `<data dir>/pg` (a restored backup) is moved there (a rename: same filesystem).
 * Everything else of the data directory (master key, admin.pat, admin.password, postgres.log) stays in it.
 */
export function placeCluster(dataDir: string, runAs: RunAs | undefined): string {
  const dir = clusterPlace(dataDir, runAs);
  if (runAs) ownedBy(dir, runAs);
  return dir;
}

function clusterPlace(dataDir: string, runAs: RunAs | undefined): string {
  const link = join(dataDir, "pg");
  let entry: "link" | "dir" | "none" = "none";
  try {
    entry = lstatSync(link).isSymbolicLink() ? "link" : "dir";
  } catch {
    // none yet
  }
  if (entry === "link") return linkedCluster(dataDir, link);
  if (!runAs || reachable(dataDir, runAs)) return link;

  const real = realpathSync(dataDir);
  const clusters = systemDir(
    "clusters",
    (dir, why) =>
      `SVC_DATA_DIR ${dataDir} cannot be reached by the user '${runAs.name}' that PostgreSQL runs as (this process is root), and ${dir} for its cluster cannot be created (${why}): make the data directory's parents traversable (chmod o+x), or choose an SVC_DATA_DIR that user can reach`,
  );
  // A new directory for every cluster placed here: a data directory removed and created again at the same
  // path (or an unmounted one reappearing) never finds another's cluster.
  const home = join(clusters, `${hashOf(real)}-${randomBytes(4).toString("hex")}`);
  mkdirSync(home, { mode: 0o711 });
  chmodSync(home, 0o711);
  writeFileSync(join(home, OWNER_FILE), `${real}\n`, { mode: 0o644 });
  const cluster = join(home, "pg");
  if (entry === "dir") {
    try {
      renameSync(link, cluster);
    } catch (err) {
      rmSync(home, { recursive: true, force: true });
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return clusterPlace(dataDir, runAs); // another process moved it first
      throw new StartupError(
        `SVC_DATA_DIR ${dataDir} cannot be reached by the user '${runAs.name}' that PostgreSQL runs as (this process is root), and its cluster pg/ cannot be moved to ${cluster} (${code}): move it there and leave a link (mv ${link} ${cluster} && ln -s ${cluster} ${link}), make the data directory's parents traversable (chmod o+x), or choose another SVC_DATA_DIR`,
      );
    }
  }
  try {
    symlinkSync(cluster, link);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST" || entry === "dir") throw err;
    rmSync(home, { recursive: true, force: true }); // another process placed the cluster first
    return clusterPlace(dataDir, runAs);
  }
  console.error(
    `the embedded PostgreSQL cluster of ${dataDir} is in ${cluster} (${link} links to it): the user '${runAs.name}' that PostgreSQL runs as cannot reach ${dataDir}`,
  );
  return cluster;
}

/** The cluster `<data dir>/pg` links to; refused when it is gone, or when it is another data directory's. */
function linkedCluster(dataDir: string, link: string): string {
  const target = clusterDirOf(link);
  // The target's directory without the cluster: a first start that stopped before initdb finished.
  if (!existsSync(target) && !existsSync(dirname(target))) {
    throw new StartupError(
      `SVC_DATA_DIR ${dataDir}: pg links to ${target}, which does not exist: restore the cluster there from a backup, or remove the link ${link} to start on an empty database`,
    );
  }
  const ownerFile = join(dirname(target), OWNER_FILE);
  if (!existsSync(ownerFile)) return target;
  const real = realpathSync(dataDir);
  const recorded = readFileSync(ownerFile, "utf8").trim();
  if (recorded === real) return target;
  // A copy of a data directory that kept the link (cp -a, tar without -h) would share the original's cluster.
  if (recorded && clusterDirOf(join(recorded, "pg")) === target && existsSync(join(recorded, "pg"))) {
    throw new StartupError(
      `SVC_DATA_DIR ${dataDir} and ${recorded} both lead to the embedded PostgreSQL cluster ${target} (a copy that kept the link pg): copy a data directory following links (cp -rL, tar -h), or remove one of them`,
    );
  }
  try {
    writeFileSync(ownerFile, `${real}\n`); // the data directory was moved or renamed
  } catch {
    // not root: the record stays as it was
  }
  return target;
}

/**
 * Whether `runAs` can enter the data directory, giving the data directory itself o+x (as before) when its
 * parent is reachable: a data directory in the temp dir or a checkout under /home keeps its cluster inside.
 */
function reachable(dataDir: string, runAs: RunAs): boolean {
  if (!canEnter(dirname(dataDir), runAs)) return false;
  const mode = statSync(dataDir).mode & 0o777;
  if ((mode & 0o001) === 0) chmodSync(dataDir, mode | 0o711);
  return canEnter(dataDir, runAs);
}

/**
 * A cluster restored as root (`cp -rL`, or `tar -x` from another machine) belongs to root, and PostgreSQL's
 * user could not open it: as root, the cluster is handed to the user PostgreSQL runs as.
 */
function ownedBy(dir: string, runAs: RunAs): void {
  let st: Stats;
  try {
    st = lstatSync(dir);
  } catch {
    return; // no cluster yet: initdb makes it
  }
  if (!st.isDirectory() || (st.uid === runAs.uid && st.gid === runAs.gid)) return;
  const walk = (path: string) => {
    const s = lstatSync(path);
    lchownSync(path, runAs.uid, runAs.gid);
    if (s.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(dir);
}

/** Whether `runAs` can enter `dir` (search permission on it and every parent). */
export function canEnter(dir: string, runAs: RunAs): boolean {
  try {
    execFileSync("/bin/sh", ["-c", 'cd "$1"', "sh", dir], { uid: runAs.uid, gid: runAs.gid, stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/**
 * `SYSTEM_DIR/<sub>`, created (0711, root) when missing. Refused when anyone but root could write it or
 * `SYSTEM_DIR`, since the PostgreSQL programs and clusters kept there must not be planted or swapped.
 * `failure` words the one-line error when it cannot be created (say, a read-only /var/lib).
 */
export function systemDir(sub: string, failure: (dir: string, why: string) => string): string {
  const dir = join(SYSTEM_DIR, sub);
  try {
    for (const d of [SYSTEM_DIR, dir]) {
      if (!existsSync(d)) {
        mkdirSync(d, { mode: 0o711 });
        chmodSync(d, 0o711);
      }
    }
  } catch (err) {
    throw new StartupError(failure(dir, (err as NodeJS.ErrnoException).code ?? (err as Error).message));
  }
  for (const d of [dirname(SYSTEM_DIR), SYSTEM_DIR, dir]) {
    const st = lstatSync(d);
    if (st.isSymbolicLink() || st.uid !== 0 || (st.mode & 0o022) !== 0) {
      throw new StartupError(`${d} must be a directory owned by root that no one else can write (it holds the embedded PostgreSQL's programs and clusters)`);
    }
  }
  return dir;
}

function hashOf(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 12);
}
