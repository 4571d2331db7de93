import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { consoleBuildPrefix } from "./console.js";

/**
 * After the whole run: removes the run's console builds, and stops embedded PostgreSQL servers of test data
 * directories that a failed test left running (their owner, a test server in a vitest worker, is gone; the
 * server would wait for the next start to adopt it). Only orphaned postmasters (their parent is no longer a node process) of the suite's own
 * temporary directories are touched: a project still running keeps its servers.
 */
export default function setup(): () => void {
  return () => {
    // The console builds of this run's test processes (test/support/console.ts).
    for (const name of readdirSync(tmpdir()).filter((n) => n.startsWith(consoleBuildPrefix(process.pid)))) {
      rmSync(join(tmpdir(), name), { recursive: true, force: true });
    }
    if (!existsSync("/proc/self")) return;
    for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
      let cmd: string;
      try {
        cmd = readFileSync(join("/proc", pid, "cmdline"), "utf8");
      } catch {
        continue;
      }
      const dir = /postgres\0-D\0([^\0]+)/.exec(cmd)?.[1];
      if (dir?.startsWith(join(tmpdir(), "svc-")) && !parentIsNode(pid)) {
        try {
          process.kill(Number(pid), "SIGQUIT");
        } catch {
          // gone
        }
      }
    }
  };
}

function parentIsNode(pid: string): boolean {
  try {
    const ppid = readFileSync(join("/proc", pid, "stat"), "utf8")
      .replace(/^.*\) /, "")
      .split(" ")[1]!;
    return readFileSync(join("/proc", ppid, "cmdline"), "utf8").includes("node");
  } catch {
    return false;
  }
}
