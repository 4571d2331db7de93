import { execFile, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { databaseEnv, freshPostgresDatabase, testDb } from "../support/database.js";

/**
 * The Containerfile, built and run with podman: the image starts on its embedded PostgreSQL in a volume, as its
 * non-root user on a read-only root file system, a sign-in works, SIGTERM stops it with code 0, and a new
 * container on the same volume keeps the data (the changed password, a changed setting, the PAT). With
 * TEST_DATABASE_URL the same image also runs `migrate` and `start` on that PostgreSQL server.
 *
 * No registry is reachable here, so the base image (Node.js on Debian) is made locally by
 * scripts/container-base.sh (mmdebstrap and the npm registry), unless SVC_CONTAINER_BASE names one. It needs
 * podman and mmdebstrap (Debian packages, with runc: see docs/drafts/container.md for why) and root. Without
 * them the file is skipped with the reason printed; with SVC_CONTAINER_TEST=1 (CI) a missing tool or a podman
 * that cannot run containers fails instead; SVC_CONTAINER_TEST=0 skips it. SVC_CONTAINER_IMAGE tests an image
 * already built instead of building one.
 */

const root = join(import.meta.dirname, "..", "..");
const mode = process.env.SVC_CONTAINER_TEST ?? "auto"; // "1": required, "0": off, else: when possible
const prebuilt = process.env.SVC_CONTAINER_IMAGE || undefined;
const givenBase = process.env.SVC_CONTAINER_BASE || undefined;
const MIN = 60_000;

const has = (tool: string) => {
  try {
    execFileSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
};

/** Why this file cannot run here, or undefined when it can. */
function missing(): string | undefined {
  if (!has("podman")) return "podman is not installed (Debian package 'podman')";
  if (!prebuilt && !givenBase) {
    if (!has("mmdebstrap")) return "mmdebstrap is not installed (Debian package 'mmdebstrap'), needed for the local base image";
    if (process.getuid?.() !== 0) return "the local base image (mmdebstrap, podman import) is made as root; run as root or set SVC_CONTAINER_BASE";
  }
  if (!prebuilt) {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts?: Record<string, string> };
    if (!pkg.scripts?.build) return "package.json has no 'build' script yet (the Containerfile runs `npm run build`)";
  }
  return undefined;
}

const skipReason =
  testDb !== "embedded"
    ? "runs once, in the embedded project (it tests both databases itself)"
    : mode === "0"
      ? "SVC_CONTAINER_TEST=0"
      : mode === "1"
        ? undefined
        : missing();
if (skipReason && testDb === "embedded") console.log(`container test skipped: ${skipReason}`);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], timeoutMs = 2 * MIN): Promise<Run> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd: root, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === "number" ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

async function must(cmd: string, args: string[], timeoutMs?: number): Promise<string> {
  const r = await run(cmd, args, timeoutMs);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (${r.code}):\n${r.stdout.slice(-4000)}\n${r.stderr.slice(-4000)}`);
  return r.stdout.trim();
}

/** A hard limit of this process, for podman's --ulimit. */
function hardLimit(name: string): number | undefined {
  const line = readFileSync("/proc/self/limits", "utf8")
    .split("\n")
    .find((l) => l.startsWith(name));
  const hard = line?.slice(26).trim().split(/\s+/)[1];
  return hard && /^\d+$/.test(hard) ? Number(hard) : undefined;
}

/**
 * The podman options under which a container starts on this machine: none where podman works as installed;
 * in a sandbox without CAP_SYS_RESOURCE on cgroup v1 with a cgroup v2 hierarchy beside it (this one), runc
 * instead of crun (crun refuses such "hybrid" cgroups) and ulimits no higher than this process's (podman's
 * defaults raise them, which only CAP_SYS_RESOURCE may). Returns the global and the per-container options,
 * or the failures of every attempt.
 */
async function podmanOptions(image: string): Promise<{ global: string[]; container: string[] } | { failures: string[] }> {
  const nofile = hardLimit("Max open files");
  let pidMax = 32768;
  try {
    pidMax = Number(readFileSync("/proc/sys/kernel/pid_max", "utf8").trim());
  } catch {
    // not Linux's /proc: keep the default
  }
  const nproc = Math.min(hardLimit("Max processes") ?? pidMax, pidMax);
  const ulimits = [...(nofile ? ["--ulimit", `nofile=${nofile}:${nofile}`] : []), "--ulimit", `nproc=${nproc}:${nproc}`];
  const attempts: { global: string[]; container: string[] }[] = [
    { global: [], container: [] },
    { global: [], container: ulimits },
    ...(has("runc") ? [{ global: ["--runtime", "runc"], container: ulimits }] : []),
  ];
  const failures: string[] = [];
  for (const a of attempts) {
    const r = await run("podman", [...a.global, "run", "--rm", ...a.container, "--entrypoint", "node", image, "-e", "process.exit(0)"]);
    if (r.code === 0) return a;
    failures.push(`podman ${[...a.global, "run", ...a.container].join(" ")}: ${r.stderr.trim().split("\n").pop()}`);
  }
  return { failures };
}

async function freePort(): Promise<number> {
  const net = await import("node:net");
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function waitReady(url: string, container: string, timeoutMs = 3 * MIN): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const r = await rest(url, "GET", "/readyz").catch(() => undefined);
    if (r?.status === 200) return;
    const state = await run("podman", ["inspect", "--format", "{{.State.Running}}", container]);
    if (state.stdout.trim() === "false") break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  const logs = await run("podman", ["logs", container]);
  throw new Error(`${container} did not become ready at ${url}:\n${logs.stdout.slice(-4000)}${logs.stderr.slice(-4000)}`);
}

/** Signs in on the login form with plain HTTP: the status and the page. */
async function signIn(
  url: string,
  loginName: string,
  password: string,
): Promise<{ status: number; body: string; next: (fields: Record<string, string>) => Promise<{ status: number; body: string }> }> {
  const page = await rest(url, "GET", "/ui/login");
  const cookie = String(page.headers["set-cookie"]).split(";")[0]!;
  const csrf = (page.body as string).match(/name="csrf" value="([^"]+)"/)![1]!;
  const post = async (path: string, fields: Record<string, string>) => {
    const r = await rest(url, "POST", path, {
      body: new URLSearchParams({ ...fields, csrf }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    });
    return { status: r.status, body: String(r.body) };
  };
  const r = await post("/ui/login/password", { loginName, password });
  return {
    ...r,
    // the change-password form of the same page session, with its hidden `pending` proof
    next: (fields) => post("/ui/login/password/change", { pending: r.body.match(/name="pending" value="([^"]+)"/)?.[1] ?? "", ...fields }),
  };
}

describe.skipIf(skipReason !== undefined)("the container image (Containerfile, podman)", () => {
  const tag = randomBytes(4).toString("hex");
  // a tag of this run: test runs at the same time on one machine do not share an image
  const image = prebuilt ?? `localhost/svc-iam:test-${tag}`;
  const volume = `svc-test-data-${tag}`;
  const containers: string[] = [];
  let opts: { global: string[]; container: string[] };
  /** Why podman cannot run a container here (tests then skip, unless SVC_CONTAINER_TEST=1). */
  let unavailable: string | undefined;
  const podman = (args: string[], timeoutMs?: number) => must("podman", [...opts.global, ...args], timeoutMs);

  beforeAll(async () => {
    const missingTool = missing();
    if (missingTool) throw new Error(`SVC_CONTAINER_TEST=1 but ${missingTool}`);
    // the local base image of this Node.js version, made once (podman image rm it to make it again)
    const local = `localhost/svc-node-base:${process.versions.node}`;
    const base =
      givenBase ??
      ((await run("podman", ["image", "exists", local])).code === 0
        ? local
        : (await must("bash", [join(root, "scripts/container-base.sh"), local], 10 * MIN)).split("\n").pop()!);
    const found = await podmanOptions(base);
    if ("failures" in found) {
      unavailable = `podman cannot run a container here:\n${found.failures.join("\n")}`;
      if (mode === "1") throw new Error(unavailable);
      console.log(`container test skipped: ${unavailable}`);
      return;
    }
    opts = found;
    console.log(`container test: base ${base}, podman options: ${[...opts.global, ...opts.container].join(" ") || "none"}`);
    if (!prebuilt) {
      // The CA of a TLS-intercepting proxy (this sandbox's) reaches `npm ci` as a build secret, never a layer.
      const ca = process.env.NODE_EXTRA_CA_CERTS && existsSync(process.env.NODE_EXTRA_CA_CERTS) ? process.env.NODE_EXTRA_CA_CERTS : undefined;
      await podman(
        [
          "build",
          ...opts.container,
          "--format",
          "docker", // HEALTHCHECK exists in the docker format only
          "--build-arg",
          `BASE=${base}`,
          ...(ca ? ["--secret", `id=ca,src=${ca}`] : []),
          "-f",
          "Containerfile",
          "-t",
          image,
          ".",
        ],
        15 * MIN,
      );
    }
  }, 30 * MIN);

  afterAll(async () => {
    if (!opts) return;
    // Each step's time is printed: a slow disk makes removal slow, and a timeout should say which step it was.
    const step = async (what: string, args: string[]) => {
      const started = Date.now();
      const r = await run("podman", [...opts.global, ...args]);
      console.log(`container test clean-up: ${what} in ${((Date.now() - started) / 1000).toFixed(1)} s${r.code ? ` (exit ${r.code})` : ""}`);
    };
    if (containers.length) await step("containers removed", ["rm", "--force", "--volumes", "--time", "0", ...containers]);
    await step("volume removed", ["volume", "rm", "--force", volume]);
    // This run's image is untagged, not removed: removing its layers is the slow part, and they are the next
    // run's build cache; the prune below frees them an hour on (untagged images and earlier runs' build stages).
    if (!prebuilt) await step("image untagged", ["untag", image, image]); // named: an image of the same ID keeps its other runs' names
    await step("images unused for an hour pruned", ["image", "prune", "--force", "--filter", "until=1h"]);
  }, 10 * MIN);

  /** Starts a container of the image with the data volume, on a free loopback port; its URL. */
  async function start(name: string, extra: string[] = []): Promise<string> {
    const port = await freePort();
    containers.push(name);
    await podman([
      "run",
      "--detach",
      "--name",
      name,
      ...opts.container,
      // as in Kubernetes (deploy/kubernetes): nothing but the data volume and /tmp is writable
      "--read-only",
      "--tmpfs",
      "/tmp",
      "--volume",
      `${volume}:/var/lib/svc`,
      "--publish",
      `127.0.0.1:${port}:8080`,
      ...extra,
      image,
    ]);
    const url = `http://127.0.0.1:${port}`;
    await waitReady(url, name);
    return url;
  }

  async function stop(name: string): Promise<void> {
    await podman(["stop", "--time", "30", name], 2 * MIN);
    expect(await podman(["inspect", "--format", "{{.State.ExitCode}}", name])).toBe("0");
    const logs = await run("podman", [...opts.global, "logs", name]);
    expect(logs.stdout + logs.stderr).toContain("shutting down: finishing in-flight calls");
  }

  const NEW_PASSWORD = "Container-Kept-9!";
  let pat = "";

  it(
    "starts on its embedded PostgreSQL in the volume, as the non-root user, healthy; the admin signs in and changes the password",
    async (ctx) => {
      if (unavailable) ctx.skip();
      const name = `svc-test-a-${tag}`;
      const url = await start(name);
      expect(await podman(["exec", name, "id", "-u"])).toBe("10001");
      expect(await podman(["inspect", "--format", "{{.Config.User}}", image])).toBe("10001:10001");
      // the image's HEALTHCHECK (podman runs it on demand here: its timers need systemd)
      await podman(["healthcheck", "run", name]);
      const files = await podman(["exec", name, "ls", "/var/lib/svc"]);
      expect(files.split("\n")).toEqual(expect.arrayContaining(["admin.pat", "admin.password", "masterkey", "pg"]));

      const password = await podman(["exec", name, "cat", "/var/lib/svc/admin.password"]);
      pat = await podman(["exec", name, "cat", "/var/lib/svc/admin.pat"]);
      const first = await signIn(url, "admin", password);
      expect(first.status).toBe(200);
      expect(first.body).toContain('name="newPassword"');
      const changed = await first.next({ newPassword: NEW_PASSWORD, confirmPassword: NEW_PASSWORD });
      expect(changed.status, changed.body.slice(0, 500)).toBe(200);
      expect(changed.body).not.toContain('name="newPassword"');

      const patched = await rest(url, "PATCH", "/settings/v3alpha/languages", { token: pat, body: { defaultLanguage: { key: "de" } } });
      expect(patched.status).toBe(200);
      await stop(name);
    },
    10 * MIN,
  );

  it(
    "a new container on the same volume keeps the data: the new password signs in, the old one does not, the PAT and the setting stay",
    async (ctx) => {
      if (unavailable) ctx.skip();
      const name = `svc-test-b-${tag}`;
      const url = await start(name);
      const again = await signIn(url, "admin", NEW_PASSWORD);
      expect(again.status).toBe(200);
      expect(again.body).not.toContain('name="newPassword"');
      expect((await signIn(url, "admin", "Wrong-Password-1!")).status).toBe(401);
      const languages = await rest(url, "GET", "/settings/v3alpha/languages", { token: pat });
      expect(languages.status).toBe(200);
      expect(JSON.stringify(languages.body)).toContain('"de"');
      await stop(name);
    },
    10 * MIN,
  );

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    "with DATABASE_URL: `migrate` applies the migrations and exits, `start` serves on that PostgreSQL and keeps nothing of the database in the volume",
    async (ctx) => {
      if (unavailable) ctx.skip();
      const db = await freshPostgresDatabase();
      const name = `svc-test-c-${tag}`;
      try {
        const port = await freePort();
        // the host's PostgreSQL is on its loopback address: the host's network
        const env = [
          "--network",
          "host",
          // DATABASE_URL, and the server itself when the run goes through a pooler
          ...Object.entries(databaseEnv(db)).flatMap(([k, v]) => ["-e", `${k}=${v}`]),
          "-e",
          `SVC_PORT=${port}`,
          "-e",
          "SVC_HOST=127.0.0.1",
        ];
        const migrated = await podman(["run", "--rm", ...opts.container, "--read-only", ...env, image, "migrate"], 3 * MIN);
        expect(migrated).toMatch(/^applied /m);
        containers.push(name);
        await podman([
          "run",
          "--detach",
          "--name",
          name,
          ...opts.container,
          "--read-only",
          "--tmpfs",
          "/tmp",
          ...env,
          "-e",
          "SVC_FIRSTINSTANCE_ADMIN_PASSWORD=Configured-Secret-9",
          image,
        ]);
        const url = `http://127.0.0.1:${port}`;
        await waitReady(url, name);
        expect((await signIn(url, "admin", "Configured-Secret-9")).status).toBe(200);
        expect(await podman(["exec", name, "ls", "/var/lib/svc"])).not.toMatch(/\bpg\b|masterkey/);
        await stop(name);
      } finally {
        await run("podman", [...opts.global, "rm", "--force", "--volumes", "--time", "0", name]);
        await db.drop();
      }
    },
    10 * MIN,
  );
});
