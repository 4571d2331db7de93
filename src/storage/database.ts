import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import pg from "pg";
import { PrismaClient } from "../../gen/prisma/client.js";

export type Prisma = PrismaClient;

/**
 * The database: a Prisma client over embedded PGlite (default) or a PostgreSQL server (DATABASE_URL),
 * plus the two things Prisma cannot do: run a multi-statement script (migrations) and LISTEN.
 */
export interface Database {
  readonly kind: "pglite" | "postgres";
  readonly prisma: PrismaClient;
  /** The embedded database itself (PGlite only), for tooling that needs a driver adapter of its own. */
  readonly pglite?: PGlite;
  /** Runs SQL with several statements (simple query protocol). */
  execScript(sql: string): Promise<void>;
  /** Calls fn for every NOTIFY on channel; in-process only on PGlite, where one process owns the data. */
  listen(channel: string, fn: () => void): Promise<() => Promise<void>>;
  notify(channel: string): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  /** PGlite directory; undefined keeps the database in memory. */
  dataDir?: string | undefined;
  poolSize?: number;
}

export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  return opts.databaseUrl ? openPostgres(opts.databaseUrl, opts.poolSize ?? 10) : openPGlite(opts.dataDir);
}

async function openPGlite(dataDir: string | undefined): Promise<Database> {
  let dir: string | undefined;
  if (dataDir) {
    dir = join(dataDir, "pgdata");
    mkdirSync(dir, { recursive: true });
  }
  const client = dir ? await PGlite.create(dir) : await PGlite.create();
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(client) });
  const listeners = new Map<string, Set<() => void>>();
  return {
    kind: "pglite",
    prisma,
    pglite: client,
    async execScript(sql) {
      await client.exec(sql);
    },
    async listen(channel, fn) {
      const set = listeners.get(channel) ?? new Set();
      set.add(fn);
      listeners.set(channel, set);
      return async () => void set.delete(fn);
    },
    async notify(channel) {
      for (const fn of listeners.get(channel) ?? []) fn();
    },
    async ping() {
      await client.query("select 1");
    },
    async close() {
      await prisma.$disconnect();
      await client.close();
    },
  };
}

async function openPostgres(url: string, poolSize: number): Promise<Database> {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  // A broken idle connection must not take the process down; the pool replaces it.
  pool.on("error", () => {});
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  let listenClient: pg.Client | undefined;
  const listeners = new Map<string, Set<() => void>>();
  return {
    kind: "postgres",
    prisma,
    async execScript(sql) {
      await pool.query(sql);
    },
    async listen(channel, fn) {
      if (!listenClient) {
        listenClient = new pg.Client({ connectionString: url });
        listenClient.on("error", () => {});
        await listenClient.connect();
        listenClient.on("notification", (n) => {
          for (const f of listeners.get(n.channel) ?? []) f();
        });
      }
      if (!listeners.has(channel)) {
        listeners.set(channel, new Set());
        await listenClient.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      }
      listeners.get(channel)!.add(fn);
      return async () => void listeners.get(channel)?.delete(fn);
    },
    async notify(channel) {
      await pool.query("select pg_notify($1, '')", [channel]);
    },
    async ping() {
      await pool.query("select 1");
    },
    async close() {
      await prisma.$disconnect();
      await listenClient?.end().catch(() => {});
      await pool.end();
    },
  };
}
