import { execFileSync, spawn, spawnSync } from "node:child_process";
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { testDb } from "./database.js";
import { reservePort } from "./vendor-stand-ins.js";

/**
 * A PostgreSQL server of a test's own (Debian's, the machine's packages), for what the shared one at
 * 127.0.0.1:5432 must not suffer: being stopped, killed and started again under a running server. Its cluster
 * lives in a temporary directory, on a free loopback port, trust authentication; as root it runs as the
 * `postgres` user, as PostgreSQL refuses root.
 */
export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  port: number;
  start(): void;
  /**
   * Fast shutdown (SIGINT): sessions are ended (57P01), new ones refused until `start`. Immediate (SIGQUIT): no
   * checkpoint, crash recovery at the next start, as after a crash.
   */
  stop(mode?: "fast" | "immediate"): void;
  /** Runs one statement on its `postgres` database, on a connection of its own. */
  query<T = Record<string, unknown>>(text: string, values?: unknown[]): Promise<T[]>;
  /** A replica's: holds replay back, once it really has stopped (a pause is only requested at first). */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** SIGKILL to the postmaster, as a crash: its backends end by themselves, `start` then runs crash recovery. */
  kill(): void;
  /**
   * `start` without blocking this process meanwhile: a server running in it goes on answering (and its timers do
   * not all fire late at once), as a server beside a database that restarts does.
   */
  startInBackground(): Promise<void>;
  /** Its cluster directory (PG_VERSION, postgresql.conf). */
  dataDir: string;
  /** Stops it and removes its cluster. */
  remove(): void;
}

function binDir(): string {
  const versions = readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a));
  if (!versions.length) throw new Error("no PostgreSQL under /usr/lib/postgresql (apt-get install postgresql)");
  return `/usr/lib/postgresql/${versions[0]}/bin`;
}

/**
 * Whether a file whose PostgreSQL servers are all its own runs in this project: in the embedded one only, since the
 * PostgreSQL project would run the very same thing again (it differs only in the database the suite shares).
 */
export const ownPostgresRunsHere = testDb === "embedded";

/** A new cluster, made by initdb. */
export function startPrivatePostgres(): Promise<PrivatePostgres> {
  return startCluster((run, data) => run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"]));
}

/**
 * A streaming replica of `primary`: a base backup of it (`pg_basebackup -R` writes the standby's connection to
 * the primary), started as a hot standby that serves reads. `SELECT pg_wal_replay_pause()` on it holds it back.
 */
export function startReplica(primary: PrivatePostgres): Promise<PrivatePostgres> {
  return startCluster((run, data) =>
    run("pg_basebackup", ["-h", "127.0.0.1", "-p", String(primary.port), "-U", "postgres", "-D", data, "-R", "-X", "stream", "-c", "fast"]),
  );
}

async function startCluster(make: (run: (program: string, args: string[]) => void, data: string) => void): Promise<PrivatePostgres> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), "svc-private-pg-"));
  const data = join(dir, "data");
  const asRoot = process.getuid?.() === 0;
  const ids = asRoot
    ? { uid: Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" })), gid: Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" })) }
    : {};
  if (asRoot) chownSync(dir, ids.uid!, ids.gid!);
  const run = (program: string, args: string[]) => {
    const r = spawnSync(join(bin, program), args, { ...ids, encoding: "utf8", env: { ...process.env, LC_ALL: "C" } });
    if (r.status !== 0) throw new Error(`${program} ${args.join(" ")}: ${r.stderr || r.stdout}`);
  };
  make(run, data);
  const port = await reservePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
  const server: PrivatePostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dataDir: data,
    start: () => run("pg_ctl", ["-D", data, "-l", join(dir, "log"), "-o", options, "-w", "start"]),
    async query<T>(text: string, values?: unknown[]) {
      const client = new pg.Client({ connectionString: this.url });
      await client.connect();
      try {
        return (await client.query(text, values)).rows as T[];
      } finally {
        await client.end();
      }
    },
    async pauseReplay() {
      await this.query("SELECT pg_wal_replay_pause()");
      for (let i = 0; i < 100; i++) {
        const [row] = await this.query<{ state: string }>("SELECT pg_get_wal_replay_pause_state() AS state");
        if (row?.state === "paused") return;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error("replay did not pause within 2 s");
    },
    async resumeReplay() {
      await this.query("SELECT pg_wal_replay_resume()");
    },
    async startInBackground() {
      // After a kill the postmaster's orphaned backends hold its lock file for a moment: try again until they are gone.
      for (let tries = 1; ; tries++) {
        const r = await new Promise<{ code: number | null; out: string }>((resolve) => {
          const child = spawn(join(bin, "pg_ctl"), ["-D", data, "-l", join(dir, "log"), "-o", options, "-w", "start"], {
            ...ids,
            env: { ...process.env, LC_ALL: "C" },
          });
          let out = "";
          child.stdout.on("data", (d) => (out += d));
          child.stderr.on("data", (d) => (out += d));
          child.on("close", (code) => resolve({ code, out }));
        });
        if (r.code === 0) return;
        if (tries >= 50 || !/lock file|already exists|another server/i.test(r.out)) throw new Error(`pg_ctl start: ${r.out}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    kill: () => process.kill(Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]), "SIGKILL"),
    stop: (mode = "fast") => run("pg_ctl", ["-D", data, "-m", mode, "-w", "stop"]),
    remove: () => {
      spawnSync(join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"], { ...ids });
      rmSync(dir, { recursive: true, force: true });
    },
  };
  server.start();
  return server;
}
