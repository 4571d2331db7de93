import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, chownSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { StartupError } from "../config/startup-error.js";
import { binariesReachableBy, postgresBinaries, postgresRunAs, type PostgresBinaries, type RunAs } from "./embedded-binaries.js";
import { clusterDirOf, placeCluster } from "./embedded-cluster.js";

/** How to reach the embedded server: a unix socket only, so no other user of the machine can connect. */
export interface EmbeddedPostgres {
  connection: pg.ClientConfig;
  /** The postmaster's PID (it may have been started by an earlier process of this data directory). */
  pid: number;
  /** Stops the server (fast shutdown: a checkpoint, nothing acknowledged is lost). */
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Called when the server or this process's hold on it is lost while running (the caller should exit). */
  onLost?: (reason: string) => void;
  /** The PostgreSQL programs to run instead of the installed package's (tests: a checkout PostgreSQL's user cannot reach). */
  binaries?: PostgresBinaries;
}

// The owner's session-level advisory lock: whoever holds it owns the data directory. PostgreSQL releases it
// when the owner's connection ends, so a process killed with -9 never leaves a stale lock behind.
const OWNER_LOCK = 7_311_000;
const PORT = 5432;
const READY_TIMEOUT_MS = 120_000;
const APP_PREFIX = "svc-iam pid ";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts (or adopts) the PostgreSQL server of `<dataDir>/pg` and takes ownership of it. As root, when
 * PostgreSQL's user cannot reach the data directory, `<dataDir>/pg` is a link to the cluster's real place
 * (`embedded-cluster.ts`).
 *
 * One process owns a data directory at a time: ownership is a session advisory lock inside the server itself,
 * so it is atomic and dies with its holder. A second process finds the lock taken and refuses, naming the
 * owner's PID. A postmaster left running by a process killed with -9 is adopted by the next owner (it is the
 * same data directory, already recovered); a `postmaster.pid` left by a crashed postmaster is cleared by
 * PostgreSQL itself, or here when its PID now belongs to another program.
 */
export async function startEmbeddedPostgres(dataDir: string, opts: EmbeddedOptions = {}): Promise<EmbeddedPostgres> {
  // Parents get the usual mode (a recursive mkdir would make them all 0700, closing them to PostgreSQL's
  // user when running as root); the data directory itself is private.
  if (!existsSync(dataDir)) {
    mkdirSync(dataDir, { recursive: true });
    chmodSync(dataDir, 0o700);
  }
  if (existsSync(join(dataDir, "pgdata")) && !existsSync(join(dataDir, "pg"))) {
    throw new StartupError(
      `SVC_DATA_DIR ${dataDir} holds a PGlite database (pgdata/) from an earlier version; this version runs an embedded PostgreSQL server in pg/: start with a new SVC_DATA_DIR (or move pgdata/ away)`,
    );
  }
  const runAs = postgresRunAs();
  const found = opts.binaries ?? (await postgresBinaries());
  const bins = runAs ? binariesReachableBy(found, runAs) : found;
  const pgDir = placeCluster(dataDir, runAs);
  const socketDir = socketDirFor(pgDir, runAs);
  if (!existsSync(join(pgDir, "PG_VERSION"))) await initCluster(bins, pgDir, runAs);
  const connection: pg.ClientConfig = { host: socketDir, port: PORT, user: "postgres", database: "postgres" };

  const logPath = join(dataDir, "postgres.log");
  for (let attempt = 0; attempt < 20; attempt++) {
    let owner = await connectWhenReady(connection, undefined);
    if (!owner) {
      const launched = launch(bins, pgDir, socketDir, logPath, runAs);
      owner = await connectWhenReady(connection, launched);
      if (!owner) {
        await launched.exit;
        await failedLaunch(pgDir, logPath, launched.logOffset);
        continue;
      }
    }
    const { rows } = await owner.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1) AS locked", [OWNER_LOCK]);
    if (!rows[0]!.locked) {
      const holder = await ownerPid(owner);
      await owner.end().catch(() => {});
      throw new StartupError(`SVC_DATA_DIR ${dataDir} is in use by process ${holder ?? "(unknown)"}: stop it first, or give this process its own SVC_DATA_DIR`);
    }
    return own(owner, connection, pgDir, opts);
  }
  throw new StartupError(`the embedded PostgreSQL server in ${pgDir} did not start; see ${logPath}`);
}

function own(owner: pg.Client, connection: pg.ClientConfig, pgDir: string, opts: EmbeddedOptions): EmbeddedPostgres {
  let stopping = false;
  const lost = (reason: string) => {
    if (stopping) return;
    stopping = true;
    (opts.onLost ?? defaultLost)(reason);
  };
  owner.on("error", (err) => lost(`the embedded PostgreSQL server stopped unexpectedly: ${err.message}`));
  owner.on("end", () => lost("the embedded PostgreSQL server closed this process's connection"));
  const pid = postmasterPid(pgDir)!;
  return {
    connection,
    pid,
    stop: async () => {
      stopping = true;
      // SIGINT is PostgreSQL's fast shutdown: open sessions are ended and a checkpoint is written. The
      // owner's lock is held until the postmaster is gone, so nobody adopts a server that is going away.
      signal(pid, "SIGINT");
      const deadline = Date.now() + 60_000;
      while (runsPostgres(pid) && Date.now() < deadline) await sleep(25);
      if (runsPostgres(pid)) signal(pid, "SIGQUIT");
      await owner.end().catch(() => {});
    },
  };
}

function defaultLost(reason: string): void {
  console.error(reason);
  process.exit(1);
}

async function ownerPid(client: pg.Client): Promise<string | undefined> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT a.application_name AS name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 0 AND l.objid = $1`,
    [OWNER_LOCK],
  );
  const name = rows[0]?.name;
  return name?.startsWith(APP_PREFIX) ? name.slice(APP_PREFIX.length) : undefined;
}

/**
 * Connects to the server at `connection`, waiting while it starts up or recovers. Undefined when no server
 * listens there (or the one launched by this process exited): the caller then starts one.
 */
async function connectWhenReady(connection: pg.ClientConfig, launched: Launched | undefined): Promise<pg.Client | undefined> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const client = new pg.Client({ ...connection, application_name: `${APP_PREFIX}${process.pid}` });
    client.on("error", () => {});
    try {
      await client.connect();
      return client;
    } catch (err) {
      await client.end().catch(() => {});
      const code = (err as { code?: string }).code;
      const starting = code === "57P03"; // starting up, recovering or shutting down
      if (!starting && !launched) return undefined;
      if (launched?.exited()) return undefined;
      if (Date.now() > deadline) throw new StartupError(`the embedded PostgreSQL server did not accept connections within ${READY_TIMEOUT_MS / 1000} s`);
      await sleep(starting ? 100 : 25);
    }
  }
}

interface Launched {
  exited(): boolean;
  exit: Promise<void>;
  /** Where this start's lines begin in the log. */
  logOffset: number;
}

/** Starts the postmaster in its own process group, so a Ctrl-C at the terminal reaches only the server. */
function launch(bins: PostgresBinaries, pgDir: string, socketDir: string, logPath: string, runAs: RunAs | undefined): Launched {
  const log = openSync(logPath, "a", 0o600);
  const logOffset = statSync(logPath).size;
  const args = [
    "-D",
    pgDir,
    "-k",
    socketDir,
    "-p",
    String(PORT),
    "-c",
    "listen_addresses=",
    // PostgreSQL's defaults, stated so that no configuration file can weaken them: an acknowledged commit
    // is on disk, and a torn page after a power cut is repaired from the WAL.
    "-c",
    "fsync=on",
    "-c",
    "synchronous_commit=on",
    "-c",
    "full_page_writes=on",
    "-c",
    "max_connections=200",
    "-c",
    "log_min_messages=warning",
  ];
  const child = spawn(bins.postgres, args, { detached: true, stdio: ["ignore", log, log], ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}) });
  closeSync(log);
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    child.on("exit", () => {
      exited = true;
      resolve();
    });
    child.on("error", () => {
      exited = true;
      resolve();
    });
  });
  child.unref();
  return { exited: () => exited, exit, logOffset };
}

/**
 * A postmaster that exits at start: another live postmaster of this directory holds a lock file (data
 * directory or socket; the next attempt connects to it), or the PID in a stale lock file is now a zombie or
 * another program, which PostgreSQL cannot tell from a live postmaster (the file is cleared here). Anything
 * else stops the start.
 */
async function failedLaunch(pgDir: string, logPath: string, logOffset: number): Promise<void> {
  const lines = readFileSync(logPath).subarray(logOffset).toString("utf8");
  const lockFile = /lock file "([^"]+)" already exists/.exec(lines)?.[1];
  if (lockFile) {
    const path = lockFile.startsWith("/") ? lockFile : join(pgDir, lockFile);
    const pid = pidInFile(path);
    if (pid !== undefined && !runsPostgres(pid)) rmSync(path, { force: true });
    return;
  }
  // Backends of a postmaster killed with -9 still attached to its shared memory: they exit within moments.
  if (/pre-existing shared memory block .* is still in use/.test(lines)) {
    await sleep(500);
    return;
  }
  throw new StartupError(`the embedded PostgreSQL server did not start: ${lastError(lines)} (see ${logPath})`);
}

function lastError(log: string): string {
  const lines = log.split("\n").filter((l) => /FATAL|ERROR|PANIC/.test(l));
  return (lines.at(-1) ?? log.trim().split("\n").at(-1) ?? "no output").replace(/^.*?(FATAL|ERROR|PANIC):\s*/, "");
}

async function initCluster(bins: PostgresBinaries, pgDir: string, runAs: RunAs | undefined): Promise<void> {
  // initdb writes into a directory of this process's own, renamed into place when complete: a crash mid-way
  // leaves no half cluster, and of two processes initialising at once the first rename wins and the other
  // uses that cluster (a rename onto a non-empty directory fails).
  const work = `${pgDir}.init-${process.pid}`;
  removeAbandonedInits(pgDir);
  mkdirSync(work, { mode: 0o700 });
  if (runAs) chownSync(work, runAs.uid, runAs.gid);
  // Code-point collation with Unicode case mapping, the same on every operating system: the builtin provider
  // needs no OS locale, and b-tree indexes serve prefix searches (LIKE 'x%').
  const args = ["-D", work, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale-provider=builtin", "--builtin-locale=C.UTF-8", "--locale=C"];
  try {
    await promisify(execFile)(bins.initdb, args, { ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}), env: { ...process.env, LC_ALL: "C" } });
  } catch (err) {
    rmSync(work, { recursive: true, force: true });
    const e = err as { stderr?: string; message: string };
    throw new StartupError(`initdb failed for the embedded PostgreSQL in ${pgDir}: ${(e.stderr || e.message).trim().split("\n").at(-1)}`);
  }
  try {
    renameSync(work, pgDir);
  } catch (err) {
    rmSync(work, { recursive: true, force: true });
    if (!existsSync(join(pgDir, "PG_VERSION"))) throw err;
  }
}

/** Side directories of initdb runs whose process is gone. */
function removeAbandonedInits(pgDir: string): void {
  const parent = dirname(pgDir);
  const prefix = `${basename(pgDir)}.init-`;
  for (const name of readdirSync(parent)) {
    const pid = name.startsWith(prefix) ? Number(name.slice(prefix.length)) : NaN;
    if (Number.isInteger(pid) && !isAlive(pid)) rmSync(join(parent, name), { recursive: true, force: true });
  }
}

/** A unix socket path must fit in about 100 bytes; a deep data directory gets its socket under the temp dir. */
function socketDirFor(pgDir: string, runAs: RunAs | undefined): string {
  const dir = socketDirOf(pgDir);
  if (dir === pgDir) return dir;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (runAs) chownSync(dir, runAs.uid, runAs.gid);
  return dir;
}

/**
 * Where the embedded server of `pgDir` listens: that directory, or one under the temp dir named by its hash
 * when the socket's path would not fit. Pure, so that a client (the `recover` command) finds a running server.
 */
export function socketDirOf(pgDir: string): string {
  if (Buffer.byteLength(join(pgDir, `.s.PGSQL.${PORT}`)) <= 100) return pgDir;
  return join(tmpdir(), `svc-pg-${createHash("sha256").update(pgDir).digest("hex").slice(0, 16)}`);
}

/** The URL of the embedded server of `pgDir` (`<data dir>/pg`) through its socket, or undefined when none listens there. */
export function embeddedUrlOf(pgDir: string): string | undefined {
  const socketDir = socketDirOf(clusterDirOf(pgDir));
  if (!existsSync(join(socketDir, `.s.PGSQL.${PORT}`))) return undefined;
  return `postgresql://postgres@localhost/postgres?host=${encodeURIComponent(socketDir)}&port=${PORT}`;
}

function postmasterPid(pgDir: string): number | undefined {
  return pidInFile(join(pgDir, "postmaster.pid"));
}

function pidInFile(path: string): number | undefined {
  try {
    const pid = Number(readFileSync(path, "utf8").split("\n")[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Whether `pid` is a running PostgreSQL process. A zombie (killed, not yet reaped: common where PID 1 does not
 * reap orphans) or a reused PID is not. Without /proc (macOS) any live process counts: never remove a lock
 * file that may be live.
 */
function runsPostgres(pid: number): boolean {
  if (!existsSync("/proc/self")) return isAlive(pid);
  try {
    if (/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"))) return false;
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("postgres");
  } catch {
    return false;
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}
