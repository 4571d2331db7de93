import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chownSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { reservePort } from "./vendor-stand-ins.js";

/**
 * Debian's PgBouncer in transaction mode in front of a PostgreSQL server on this machine, for every database name
 * (trust authentication): each transaction, and each statement outside one, may run on another server session. As
 * root it runs as the `postgres` user, as PgBouncer refuses root.
 */
export interface PgBouncer {
  /** postgres://postgres@127.0.0.1:<port>/<database> */
  url(database: string): string;
  stop(): Promise<void>;
}

export async function startPgBouncer(serverPort: number): Promise<PgBouncer> {
  const dir = mkdtempSync(join(tmpdir(), "svc-pgbouncer-"));
  const port = await reservePort();
  const asRoot = process.getuid?.() === 0;
  const ids = asRoot
    ? { uid: Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" })), gid: Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" })) }
    : {};
  writeFileSync(join(dir, "users.txt"), '"postgres" ""\n');
  writeFileSync(
    join(dir, "pgbouncer.ini"),
    `[databases]
* = host=127.0.0.1 port=${serverPort}
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${join(dir, "users.txt")}
pool_mode = transaction
default_pool_size = 20
max_client_conn = 500
server_reset_query =
ignore_startup_parameters = extra_float_digits,options
logfile = ${join(dir, "pgbouncer.log")}
`,
  );
  if (asRoot) for (const f of ["", "users.txt", "pgbouncer.ini"]) chownSync(join(dir, f), ids.uid!, ids.gid!);
  const child: ChildProcess = spawn("/usr/sbin/pgbouncer", [join(dir, "pgbouncer.ini")], { ...ids, stdio: "ignore" });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  // ready when it accepts connections
  const net = await import("node:net");
  for (let i = 0; ; i++) {
    const open = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, "127.0.0.1", () => {
        s.end();
        resolve(true);
      });
      s.on("error", () => resolve(false));
    });
    if (open) break;
    if (i > 100 || child.exitCode !== null) throw new Error(`pgbouncer did not start (see ${join(dir, "pgbouncer.log")})`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async stop() {
      child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
