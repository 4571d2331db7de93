// CPU time of the processes a benchmark shares the cores with, from /proc (Linux), so that a figure can say
// where the cycles went: the server, PostgreSQL, or the load generator itself. "The server" is every process of it
// (the supervisor and its workers under SVC_WORKERS >= 2), never its embedded PostgreSQL nor tsx's esbuild.
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

/** Programs below a server that are not the server: its embedded PostgreSQL (counted apart) and tsx's esbuild helper. */
const NOT_THE_SERVER = new Set(["postgres", "esbuild"]);

/** The parent of every process on the machine, from /proc/<pid>/stat (field 4, the first after the state). */
function parents(): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      out.set(Number(pid), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone in between
    }
  }
  return out;
}

/**
 * The processes of the server `pid`: itself and every process below it except PostgreSQL's and esbuild's (and
 * theirs). With SVC_WORKERS >= 2 that is the supervisor and its workers; with 1, the one process.
 */
export function serverPids(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const [child, parent] of parents()) children.set(parent, [...(children.get(parent) ?? []), child]);
  const out: number[] = [];
  const visit = (p: number) => {
    out.push(p);
    for (const c of children.get(p) ?? []) {
      let comm: string;
      try {
        comm = readFileSync(`/proc/${c}/comm`, "utf8").trim();
      } catch {
        continue;
      }
      if (!NOT_THE_SERVER.has(comm)) visit(c);
    }
  };
  visit(pid);
  return out;
}

/**
 * CPU seconds (user + system) the server `pid` has used: the sum over `serverPids(pid)`. A worker that exited
 * in between takes its share along (its parent's cutime gets it only once it is reaped): benches keep workers up.
 */
export function serverCpuSeconds(pid: number): number {
  return serverPids(pid).reduce((sum, p) => sum + statSeconds(p), 0);
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

/** CPU of the server (its workers with it: `serverCpuSeconds`), PostgreSQL and this process over what `run` does. */
export async function cpuDuring<T>(serverPid: number, run: () => Promise<T>): Promise<{ value: T; server: number; postgres: number; self: number }> {
  const before = { server: serverCpuSeconds(serverPid), postgres: postgresCpu(), self: process.cpuUsage() };
  const value = await run();
  const selfUsage = process.cpuUsage(before.self);
  return {
    value,
    server: serverCpuSeconds(serverPid) - before.server,
    postgres: postgresSince(before.postgres),
    self: (selfUsage.user + selfUsage.system) / 1e6,
  };
}
