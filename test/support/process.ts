import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { projectRoot } from "../../src/storage/paths.js";

/** bin/svc.js's V8 flag (its first line; docs/decisions.md "Build: Start time and idle memory"). */
const V8_FLAGS = ["--wasm-tiering-budget=180000000"];
let built = false;

/**
 * The arguments of `node` that run the server as `npm start` does: the compiled build with bin/svc.js's flag,
 * about half the CPU of a start through tsx (docs/decisions.md "Test run time"). The first call of a test
 * process has dist/ built when it is missing or stale (bin/svc.js --help does that, then prints its usage),
 * one test process at a time: the others wait for the one building.
 */
export function serverArgs(...args: string[]): string[] {
  if (!built) {
    const lock = join(projectRoot, ".dist-building");
    for (;;) {
      try {
        mkdirSync(lock);
      } catch {
        // a lock a killed run left behind is taken after five minutes
        const age = (() => {
          try {
            return Date.now() - statSync(lock).mtimeMs;
          } catch {
            return 0;
          }
        })();
        if (age > 300_000) rmSync(lock, { recursive: true, force: true });
        else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
        continue;
      }
      try {
        const r = spawnSync(process.execPath, ["bin/svc.js", "--help"], { cwd: projectRoot, encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "" } });
        if (r.status !== 0) throw new Error(`building dist/ for the tests failed:\n${r.stderr}`);
      } finally {
        rmSync(lock, { recursive: true, force: true });
      }
      break;
    }
    built = true;
  }
  return [...V8_FLAGS, join(projectRoot, "dist", "src", "main.js"), ...args];
}

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

/** Ends a server process that still runs, at once (SIGKILL): a test's clean-up. */
export async function killServerProcess(server: ServerProcess): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill("SIGKILL");
  await server.exited;
}

/** Starts the server as its own process (what `npm start` runs: serverArgs) and waits for the line with its URL. */
export async function startServerProcess(env: Record<string, string>, timeoutMs = 60_000): Promise<ServerProcess> {
  const started = await startOrExit(env, timeoutMs);
  if ("server" in started) return started.server;
  throw new Error(`exited with ${started.code} before it was ready:\n${started.output}`);
}

/**
 * Starts the server (serverArgs) and tells whether it came up or exited first (with its code and output). Up is the line
 * `ready` matches (its groups: the URL, the port): the ready line unless a test waits for an earlier one.
 */
export async function startOrExit(
  env: Record<string, string>,
  timeoutMs = 60_000,
  ready = /listening on (http:\/\/\S+:(\d+))/,
): Promise<{ server: ServerProcess } | { code: number | null; output: string }> {
  const child = spawn(process.execPath, serverArgs(), {
    cwd: projectRoot,
    // one process unless a test asks for workers (test/platform/workers.test.ts): the supervisor's own tests are there
    env: { ...process.env, SVC_PORT: "0", SVC_LOG_LEVEL: "warn", SVC_WORKERS: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`neither ready nor exited within ${timeoutMs / 1000} s:\n${out}`));
    }, timeoutMs);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = ready.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ server: { child, url: m[1]!.replace("localhost", "127.0.0.1"), port: Number(m[2]), output: () => out, exited } });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    void exited.then((code) => {
      clearTimeout(timer);
      resolve({ code, output: out });
    });
  });
}
