import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { serverArgs } from "./process.js";

const root = join(import.meta.dirname, "..", "..");

/**
 * The environment a spawned server gets: the test runner's, minus every configuration variable, so that
 * a variable set in the developer's shell (or by the suite) cannot change what a test asserts.
 */
function cleanEnv(env: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("SVC_") && k !== "DATABASE_URL") out[k] = v;
  // one process unless a test asks for workers (test/platform/workers.test.ts), as test/support/process.ts
  return { ...out, SVC_LOG_LEVEL: "warn", SVC_WORKERS: "1", ...env };
}

/** The server (serverArgs) with arguments and a clean environment, running (a test signals or kills it itself). */
export function spawnMain(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, serverArgs(...args), { cwd: root, env: cleanEnv(env), stdio: ["ignore", "pipe", "pipe"] });
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stderr's non-empty lines. */
  errorLines: string[];
}

/** Runs the server (serverArgs) with arguments and environment to its end (for inputs that must stop it). */
export function runCli(args: string[], env: Record<string, string> = {}, timeoutMs = 30_000): Promise<CliResult> {
  const child = spawnMain(args, env);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`still running after ${timeoutMs} ms:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, errorLines: stderr.split("\n").filter((l) => l.trim() !== "") });
    });
  });
}

export interface RunningCli {
  child: ChildProcess;
  /** The URL from the "listening on" line. */
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

/** Starts the server (serverArgs) with arguments and waits for the line with its URL (for inputs that must work). */
export function startCli(args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<RunningCli> {
  const child = spawnMain(args, env);
  let out = "";
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`no URL within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!, output: () => out, exited });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before it was ready:\n${out}`));
    });
  });
}
