import { spawn, type ChildProcess } from "node:child_process";
import { projectRoot } from "../../src/storage/paths.js";

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

/** Starts `src/main.ts` as its own process (what `npm start` runs) and waits for the line with its URL. */
export async function startServerProcess(env: Record<string, string>, timeoutMs = 60_000): Promise<ServerProcess> {
  const started = await startOrExit(env, timeoutMs);
  if ("server" in started) return started.server;
  throw new Error(`exited with ${started.code} before it was ready:\n${started.output}`);
}

/**
 * Starts `src/main.ts` and tells whether it came up or exited first (with its code and output). Up is the line
 * `ready` matches (its groups: the URL, the port): the ready line unless a test waits for an earlier one.
 */
export async function startOrExit(
  env: Record<string, string>,
  timeoutMs = 60_000,
  ready = /listening on (http:\/\/\S+:(\d+))/,
): Promise<{ server: ServerProcess } | { code: number | null; output: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
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
