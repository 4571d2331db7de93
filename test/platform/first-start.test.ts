import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SecretBox } from "../../src/crypto/secrets.js";
import { openDatabase } from "../../src/storage/database.js";
import { projectRoot } from "../../src/storage/paths.js";
import { rest } from "../support/clients.js";
import { databaseEnv, freshPostgresDatabase, testDb } from "../support/database.js";
import { startOrExit, startServerProcess, type ServerProcess } from "../support/process.js";
import { startTestServer } from "../support/server.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "svc-first-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function database(): Promise<Record<string, string>> {
  if (testDb !== "postgres") return {};
  const pgdb = await freshPostgresDatabase();
  cleanups.push(pgdb.drop);
  return databaseEnv(pgdb);
}

async function stop(p: ServerProcess): Promise<void> {
  p.child.kill("SIGTERM");
  expect(await p.exited).toBe(0);
}

async function refusal(env: Record<string, string>): Promise<string> {
  const started = await startOrExit(env);
  if ("server" in started) {
    await stop(started.server);
    throw new Error("the server started");
  }
  expect(started.code).toBe(1);
  const lines = started.output.trim().split("\n");
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

describe("the master key", () => {
  it("stops the start when SVC_MASTERKEY is not the key the database's secrets were sealed with", async () => {
    const env = { SVC_DATA_DIR: dataDir(), ...(await database()) };
    await stop(await startServerProcess(env));
    const line = await refusal({ ...env, SVC_MASTERKEY: "another-key-of-exactly-32-bytes!" });
    expect(line).toMatch(/SVC_MASTERKEY does not open this database's secrets/);
    // the right key still opens everything
    await stop(await startServerProcess(env));
    // three starts of a server: more than the default minute on a loaded machine
  }, 150_000);

  it.runIf(testDb === "embedded")(
    "is never regenerated when its file is lost while the database holds secrets",
    async () => {
      const dir = dataDir();
      await stop(await startServerProcess({ SVC_DATA_DIR: dir }));
      const keyFile = join(dir, "masterkey");
      const key = readFileSync(keyFile, "utf8");
      renameSync(keyFile, `${keyFile}.away`);
      expect(await refusal({ SVC_DATA_DIR: dir })).toContain(`the master key file ${keyFile} is missing`);
      renameSync(`${keyFile}.away`, keyFile);
      await stop(await startServerProcess({ SVC_DATA_DIR: dir }));
      expect(readFileSync(keyFile, "utf8")).toBe(key);
    },
    150_000,
  );

  it("makes /readyz fail while the key cannot open the database's secrets", async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    expect((await fetch(`${t.url}/readyz`)).status).toBe(200);
    const prisma = t.server.db.prisma;
    const original = await prisma.masterKeyVerifier.findUniqueOrThrow({ where: { id: 1 } });
    const foreign = new SecretBox(Buffer.from("a-key-this-server-never-had-32by")).seal("svc master key verifier");
    await prisma.masterKeyVerifier.update({ where: { id: 1 }, data: { sealed: foreign } });
    const res = await fetch(`${t.url}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ status: "unavailable" });
    await prisma.masterKeyVerifier.update({ where: { id: 1 }, data: { sealed: original.sealed } });
    expect((await fetch(`${t.url}/readyz`)).status).toBe(200);
  });
});

describe("start-up", () => {
  it.runIf(testDb === "postgres")("brings up two processes started together on an empty database, setting up once", async () => {
    const db = await database();
    const [a, b] = await Promise.all([startServerProcess({ SVC_DATA_DIR: dataDir(), ...db }), startServerProcess({ SVC_DATA_DIR: dataDir(), ...db })]);
    cleanups.push(
      () => stop(a),
      () => stop(b),
    );
    const creators = [a, b].filter((p) => /first start: created the first instance/.test(p.output()));
    expect(creators).toHaveLength(1);
    const patPath = /PAT is in (\S+)/.exec(creators[0]!.output())![1]!;
    const pat = readFileSync(patPath, "utf8").trim();
    // one instance, and either process serves it with the same credentials
    for (const p of [a, b]) expect((await rest(p.url, "GET", "/settings/v3alpha/languages", { token: pat })).status).toBe(200);
    const check = await openDatabase({ databaseUrl: db.DATABASE_URL, dataDir: dataDir() });
    try {
      expect(await check.prisma.instance.count()).toBe(1);
      expect(await check.prisma.event.count({ where: { type: "instance.instance.added" } })).toBe(1);
    } finally {
      await check.close();
    }
  });

  it("adds a new SVC_EXTERNAL_DOMAIN to the first instance at the next start", async () => {
    const env = { SVC_DATA_DIR: dataDir(), ...(await database()) };
    await stop(await startServerProcess(env));
    const pat = readFileSync(join(env.SVC_DATA_DIR, "admin.pat"), "utf8").trim();
    const moved = await startServerProcess({ ...env, SVC_EXTERNAL_DOMAIN: "Auth.Example.com" });
    try {
      for (const host of ["auth.example.com", "localhost"]) {
        const res = await rest(moved.url, "GET", "/settings/v3alpha/languages", { token: pat, host: `${host}:${moved.port}` });
        expect(res.status, host).toBe(200);
      }
      const discovery = await rest(moved.url, "GET", "/.well-known/openid-configuration", { host: `auth.example.com:${moved.port}` });
      expect(discovery.body.issuer).toBe(`http://auth.example.com:${moved.port}`);
      // The new external domain is where the instance moved: it becomes the primary one (mail links use it).
      const instances = await rest(moved.url, "POST", "/resources/v3alpha/instances/_search", { token: pat, body: {} });
      expect(instances.body.result[0]).toMatchObject({ primaryDomain: "auth.example.com" });
    } finally {
      await stop(moved);
    }
    // and a restart with the same domain adds nothing
    const again = await startServerProcess({ ...env, SVC_EXTERNAL_DOMAIN: "auth.example.com" });
    await stop(again);
    // Three starts of a server process one after the other, the first creating the database: on a loaded 2-core
    // CI machine each took 20-30 s, so the default minute was not enough.
  }, 180_000);
});

describe.runIf(testDb === "embedded")("the embedded data directory", () => {
  it("refuses a PGlite directory from an earlier version with a clear line", async () => {
    const dir = dataDir();
    mkdirSync(join(dir, "pgdata"));
    const line = await refusal({ SVC_DATA_DIR: dir });
    expect(line).toContain(`SVC_DATA_DIR ${dir} holds a PGlite database (pgdata/) from an earlier version`);
  });
});

describe("npm start", () => {
  it("hands SIGTERM to the server, which stops gracefully before npm exits", async () => {
    const env = { ...process.env, SVC_PORT: "0", SVC_DATA_DIR: dataDir(), SVC_LOG_LEVEL: "warn", ...(await database()) };
    const npm = spawn("npm", ["start", "--silent"], { cwd: projectRoot, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    await new Promise<void>((resolve, reject) => {
      const onData = (d: Buffer) => {
        out += d.toString();
        if (/listening on/.test(out)) resolve();
      };
      npm.stdout!.on("data", onData);
      npm.stderr!.on("data", onData);
      npm.once("exit", () => reject(new Error(`npm exited before the server was ready:\n${out}`)));
    });
    // npm runs the script through sh -c "exec node bin/svc.js": node itself is npm's child, and it runs the
    // compiled server in its own process (building dist/ first if it must).
    const server = Number(
      execFileSync("pgrep", ["-P", String(npm.pid)], { encoding: "utf8" })
        .trim()
        .split("\n")[0],
    );
    expect(readFileSync(`/proc/${server}/cmdline`, "utf8")).toContain("bin/svc.js");
    const exited = new Promise<number | null>((resolve) => npm.once("exit", (code) => resolve(code)));
    npm.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(() => process.kill(server, 0)).toThrow();
  });
});
