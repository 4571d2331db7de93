// CPU time of the processes a benchmark shares the cores with, from /proc (Linux), so that a figure can say
// where the cycles went: the server, PostgreSQL, or the load generator itself.
import { readdirSync, readFileSync } from "node:fs";

/** utime + stime of /proc/<pid>/stat in seconds (clock ticks of 1/100 s); 0 for a process that is gone. */
function statSeconds(pid: number | string): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    // utime and stime are fields 14 and 15 of stat, 12 and 13 after the command name.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** CPU seconds (user + system) the process has used. */
export function cpuSeconds(pid: number): number {
  return statSeconds(pid);
}

/** CPU seconds used so far by each PostgreSQL process on the machine (backends, WAL writer, checkpointer...), by PID. */
export function postgresCpu(): Map<string, number> {
  const out = new Map<string, number>();
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "postgres") out.set(pid, statSeconds(pid));
    } catch {
      // gone in between
    }
  }
  return out;
}

/**
 * PostgreSQL's CPU between two readings: what each process running at the end used since the first (all of it
 * for one started in between). A backend that ended in between takes its share along: a slight undercount,
 * where a plain sum of both readings would even go negative.
 */
function postgresSince(before: Map<string, number>): number {
  let total = 0;
  for (const [pid, now] of postgresCpu()) total += now - (before.get(pid) ?? 0);
  return total;
}

/** CPU of the server, PostgreSQL and this process over what `run` does. */
export async function cpuDuring<T>(serverPid: number, run: () => Promise<T>): Promise<{ value: T; server: number; postgres: number; self: number }> {
  const before = { server: cpuSeconds(serverPid), postgres: postgresCpu(), self: process.cpuUsage() };
  const value = await run();
  const selfUsage = process.cpuUsage(before.self);
  return {
    value,
    server: cpuSeconds(serverPid) - before.server,
    postgres: postgresSince(before.postgres),
    self: (selfUsage.user + selfUsage.system) / 1e6,
  };
}
