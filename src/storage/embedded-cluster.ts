import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import {
  chmodSync,
  chownSync,
  closeSync,
  constants,
  existsSync,
  lchownSync,
  lstatSync,
  openSync,
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
  writeSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
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
 *
 * As root, nothing another user could have placed is acted on (root would chown, write or start PostgreSQL on
 * it): the data directory must be root's and writable by no one else, a `pg` directory root's or PostgreSQL's
 * user's and writable by no one else, and a `pg` link must lead to exactly `SYSTEM_DIR/clusters/<id>/pg`.
 */
export function placeCluster(dataDir: string, runAs: RunAs | undefined): string {
  const dir = clusterPlace(dataDir, runAs);
  if (runAs) ownedBy(dir, runAs);
  return dir;
}

function clusterPlace(dataDir: string, runAs: RunAs | undefined): string {
  const link = join(dataDir, "pg");
  if (runAs) {
    const why = notRootsAlone(statSync(dataDir), [0]);
    if (why) {
      throw new StartupError(
        `SVC_DATA_DIR ${dataDir} ${why}, and this process is root: root would act on what others put in it (pg); use a directory of root's that no one else can write (chown root ${dataDir} && chmod go-w ${dataDir}), or run as that directory's owner`,
      );
    }
  }
  let entry: "link" | "dir" | "none" = "none";
  let st: Stats | undefined;
  try {
    st = lstatSync(link);
    entry = st.isSymbolicLink() ? "link" : "dir";
  } catch {
    // none yet
  }
  if (entry === "link") return linkedCluster(dataDir, link, runAs);
  if (runAs && st) {
    // A cluster of another user's (its postgresql.conf can run commands) is not handed to PostgreSQL's user.
    const why = notRootsAlone(st, [0, runAs.uid]);
    if (why) {
      throw new StartupError(
        `SVC_DATA_DIR ${dataDir}: pg ${why}, and this process is root: PostgreSQL would run what others put in it; check it, then run chown -R ${runAs.name}:${runAs.name} ${link} && chmod -R go-w ${link}, or remove it`,
      );
    }
  }
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
  writeOwnerFile(home, real);
  const cluster = join(home, "pg");
  if (entry === "none") {
    // Made before the link: a link whose cluster is missing then always means a lost cluster, never a first
    // start that stopped before initdb (initdb's result is renamed onto this empty directory).
    mkdirSync(cluster, { mode: 0o700 });
    chownSync(cluster, runAs.uid, runAs.gid);
  } else {
    try {
      renameSync(link, cluster);
    } catch (err) {
      rmSync(home, { recursive: true, force: true });
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return clusterPlace(dataDir, runAs); // another process moved it first
      throw new StartupError(
        `SVC_DATA_DIR ${dataDir} cannot be reached by the user '${runAs.name}' that PostgreSQL runs as (this process is root), and its cluster pg/ cannot be moved to ${cluster} (${code}): move it there and leave a link (mkdir -p ${home} && mv ${link} ${cluster} && ln -s ${cluster} ${link}), make the data directory's parents traversable (chmod o+x), or choose another SVC_DATA_DIR`,
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

/**
 * The cluster `<data dir>/pg` links to; refused when it is gone (its `clusters/<id>/` left or not: the master
 * key and admin.pat belong to that database), or when it is another data directory's. As root, only a link to
 * exactly `SYSTEM_DIR/clusters/<id>/pg` is followed (its real path), where no one but root can plant anything.
 */
function linkedCluster(dataDir: string, link: string, runAs: RunAs | undefined): string {
  const target = clusterDirOf(link);
  if (!existsSync(target)) {
    throw new StartupError(
      `SVC_DATA_DIR ${dataDir}: pg links to ${target}, which does not exist: restore the cluster there from a backup, or remove the link ${link} to start on an empty database`,
    );
  }
  const home = dirname(target);
  if (runAs) {
    const clusters = realpathSync(systemDir("clusters", (dir, why) => `${dir}: ${why}`));
    if (basename(target) !== "pg" || dirname(home) !== clusters) {
      throw new StartupError(
        `SVC_DATA_DIR ${dataDir}: pg links to ${target}, which is not a cluster in ${SYSTEM_DIR}/clusters: this process is root and follows no other link; remove the link ${link} (to move a cluster here, replace the link with the cluster itself, as cp -rL restores it)`,
      );
    }
    for (const [path, owners] of [
      [home, [0]],
      [target, [0, runAs.uid]],
    ] as const) {
      const why = notRootsAlone(lstatSync(path), owners);
      if (why) throw new StartupError(`${path} ${why}: no one but root may change ${SYSTEM_DIR}; check it, then remove it or restore its owner and mode`);
    }
  }
  const ownerFile = join(home, OWNER_FILE);
  let record: Stats;
  try {
    record = lstatSync(ownerFile);
  } catch {
    return target;
  }
  const real = realpathSync(dataDir);
  if (runAs && (!record.isFile() || record.uid !== 0 || record.nlink !== 1)) {
    throw new StartupError(
      `${ownerFile} is not a file of root's: it records the data directory the cluster belongs to; check it, then replace it (rm ${ownerFile} && echo ${real} > ${ownerFile})`,
    );
  }
  const recorded = readFileSync(ownerFile, "utf8").trim();
  if (recorded === real) return target;
  // A copy of a data directory that kept the link (cp -a, tar without -h) would share the original's cluster.
  if (recorded && clusterDirOf(join(recorded, "pg")) === target && existsSync(join(recorded, "pg"))) {
    throw new StartupError(
      `SVC_DATA_DIR ${dataDir} and ${recorded} both lead to the embedded PostgreSQL cluster ${target} (a copy that kept the link pg): copy a data directory following links (cp -rL, tar -h), or remove one of them`,
    );
  }
  if (runAs) writeOwnerFile(home, real); // the data directory was moved or renamed (not root: it cannot)
  return target;
}

/** Writes `clusters/<id>/data-dir` (`home` checked to be there), never through a symbolic link. */
function writeOwnerFile(home: string, real: string): void {
  const file = join(home, OWNER_FILE);
  let fd: number;
  try {
    fd = openSync(file, constants.O_NOFOLLOW | constants.O_CREAT | constants.O_TRUNC | constants.O_WRONLY, 0o644);
  } catch (err) {
    throw new StartupError(`${file} cannot be written (${(err as NodeJS.ErrnoException).code}): check it, then remove it`);
  }
  try {
    writeSync(fd, `${real}\n`);
  } finally {
    closeSync(fd);
  }
}

/**
 * Why `st` is not safe for root to act on: owned by none of `owners`, or writable by group or others (a
 * directory another user can write can have its entries swapped under root's feet). Undefined when safe.
 */
function notRootsAlone(st: Stats, owners: readonly number[]): string | undefined {
  if (!owners.includes(st.uid)) return `belongs to uid ${st.uid}`;
  if (!st.isSymbolicLink() && (st.mode & 0o022) !== 0) return "can be written by others";
  return undefined;
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
 * user could not open it: as root, the cluster is handed to the user PostgreSQL runs as. Only a tree root alone
 * owns and can write (everything in it root's, no directory writable by group or others, no file with another
 * hard link): then no one can swap an entry for a link while it is walked. The walk looks first and changes
 * nothing; then the owners change children before parents, so every directory on the path of a change is still
 * root's. Anything else is left to the operator, with the command.
 */
function ownedBy(dir: string, runAs: RunAs): void {
  let st: Stats;
  try {
    st = lstatSync(dir);
  } catch {
    return; // no cluster yet: initdb makes it
  }
  if (!st.isDirectory() || st.uid === runAs.uid) return;
  const tree: string[] = [];
  const walk = (path: string) => {
    const s = lstatSync(path);
    const why = s.uid !== 0 ? `belongs to uid ${s.uid}` : s.isDirectory() ? notRootsAlone(s, [0]) : s.nlink > 1 ? "has other hard links" : undefined;
    if (why) {
      throw new StartupError(
        `the embedded PostgreSQL cluster ${dir} must belong to the user '${runAs.name}' PostgreSQL runs as, and this process (root) hands over only a cluster root alone owns and can write, but ${path} ${why}: check it, then run chown -R ${runAs.name}:${runAs.name} ${dir}`,
      );
    }
    tree.push(path);
    if (s.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(dir);
  for (const path of tree.reverse()) lchownSync(path, runAs.uid, runAs.gid);
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
  for (const d of [SYSTEM_DIR, dir]) {
    try {
      mkdirSync(d, { mode: 0o711 });
      chmodSync(d, 0o711);
    } catch (err) {
      // There already (another root process starting at the same time may just have made it): checked below.
      if ((err as NodeJS.ErrnoException).code === "EEXIST") continue;
      throw new StartupError(failure(dir, (err as NodeJS.ErrnoException).code ?? (err as Error).message));
    }
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
