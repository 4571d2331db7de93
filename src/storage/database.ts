import { randomUUID } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient } from "../../gen/prisma/client.js";
import { startEmbeddedPostgres, type EmbeddedPostgres } from "./embedded.js";
import { NotificationListener } from "./notification-listener.js";
import { bounded, type Connection, connectionOf, type Timeouts } from "./primary-client.js";
import { ReadRouter, type ReadStatus, type ReplicaOptions } from "./reads.js";
import { runTransaction, transactionBoundPrisma, type Sql } from "./transactions.js";

export type Prisma = PrismaClient;

/** The channel of the start's check that notifications arrive (`notificationsArrive`). */
const PROBE_CHANNEL = "svc_probe";

/**
 * The database: a Prisma client over a PostgreSQL server, either the one at DATABASE_URL or an embedded one
 * this process starts in the data directory. Both go through the same driver adapter, pool and LISTEN/NOTIFY,
 * so the embedded default exercises exactly what production runs.
 */
export interface Database {
  readonly kind: "embedded" | "postgres";
  /** Names this start of the machine's server when several workers share the embedded database (`startTag`). */
  readonly startTag?: string | undefined;
  readonly prisma: PrismaClient;
  /** The pool behind Prisma, for what Prisma cannot do: scripts (migrations) and dedicated sessions. */
  readonly pool: pg.Pool;
  /**
   * Where reads go that may be served by a streaming replica (`reads.ts`): one that has replayed everything this
   * process knows committed, else the primary. Without replicas, the primary's `prisma` and `pool` themselves.
   * Reads that decide a write (is this code unused, this name free) and the tables written outside the event
   * store's transactions stay on `prisma`/`pool`.
   */
  readonly reads: { readonly prisma: PrismaClient; readonly pool: pg.Pool };
  /** This database with `reads` on the primary: for commands that decide on what is current. */
  readonly primary: Database;
  /** Another process committed a change (its NOTIFY, a worker's word): the next reads must see it. */
  changedElsewhere(): void;
  /**
   * The newest commit this process knows of, a WAL position (`walText` writes it as PostgreSQL does): a caller that
   * reads through another process next carries it there (`readAfter`). Undefined without replicas: every read is
   * the primary's.
   */
  readPosition(): bigint | undefined;
  /** A caller's read-after token: reads from now on see everything committed up to `position`, on any process of this database. */
  readAfter(position: bigint): void;
  /** Where reads went, and the replicas' state; undefined without replicas. */
  readStatus(): ReadStatus | undefined;
  /** Failovers seen: another of DATABASE_URL's servers took the writes (several servers only). */
  failovers(): number;
  /** Connection settings of the pool (a schema tool, a pool of a test's own). */
  readonly connection: Connection;
  /**
   * Connection settings for a session of its own (the set-up lock): SVC_DATABASE_DIRECT_URL when the pool goes
   * through a pooler in transaction mode (PgBouncer), which would hand each statement another server session.
   */
  readonly sessions: Connection;
  /**
   * Runs `fn` in a write transaction on one connection of the pool (`transactions.ts`): the client it is
   * given and `writer` both send their statements into that transaction. A `maintenance` transaction's statements
   * (a projection rebuild's) may run past SVC_DATABASE_QUERY_TIMEOUT_MS.
   */
  transaction<T>(fn: (sql: Sql) => Promise<T>, options?: { maintenance?: boolean }): Promise<T>;
  /** Prisma's model API for the transaction running in this async context (`transaction`); refused outside one. */
  readonly writer: PrismaClient;
  /** Runs SQL with several statements (simple query protocol). */
  execScript(sql: string): Promise<void>;
  /**
   * Calls fn with the payload of every NOTIFY on channel, from any process on this database, and with an empty
   * payload when notifications may have been missed (the connection broke, and again once it listens again:
   * `notification-listener.ts`).
   */
  listen(channel: string, fn: (payload: string) => void): Promise<() => Promise<void>>;
  /** Whether notifications are heard now (false while the LISTEN connection reconnects). */
  listening(): boolean;
  /**
   * Whether a notification sent through the pool reaches the LISTEN connection within `ms`: not when the pool goes
   * through a pooler in transaction mode and LISTEN went through it too (its session is handed to others).
   */
  notificationsArrive(ms?: number): Promise<boolean>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** A PostgreSQL server; without it the embedded server of `dataDir` is started. */
  databaseUrl?: string | undefined;
  dataDir: string;
  poolSize?: number;
  /** The embedded server stopped under this process (it should exit). */
  onLost?: (reason: string) => void;
  /**
   * A worker's: the embedded server of `dataDir` that the supervising process owns, reached through its socket.
   * It is used as the embedded database (never started or stopped here).
   */
  embeddedUrl?: string | undefined;
  /** The same for every worker of one start (their subscriptions' leases, src/eventstore/eventstore.ts). */
  startTag?: string | undefined;
  /** The server of `databaseUrl` itself when that goes through a pooler: LISTEN and the set-up lock need a session. */
  directUrl?: string | undefined;
  /**
   * How long to wait for a server that does not answer (`bounded`). Without them, statements are not limited
   * (the command line's migrations and rebuilds) and a connection waits 5 s.
   */
  timeouts?: Timeouts | undefined;
  /** Streaming replicas of `databaseUrl` that serve reads (`reads.ts`). */
  replicas?: ReplicaOptions | undefined;
}

export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  const poolSize = opts.poolSize ?? 20;
  const timeouts = opts.timeouts ?? { connectMs: 5_000 };
  if (opts.databaseUrl) {
    const connection = connectionOf(opts.databaseUrl, timeouts.connectMs);
    const sessions = opts.directUrl ? connectionOf(opts.directUrl, timeouts.connectMs) : connection;
    return openPostgres({ kind: "postgres", connection, sessions, poolSize, timeouts, replicas: opts.replicas });
  }
  if (opts.embeddedUrl) {
    const connection = { connectionString: opts.embeddedUrl };
    return openPostgres({ kind: "embedded", connection, sessions: connection, poolSize, timeouts, startTag: opts.startTag });
  }
  const embedded = await startEmbeddedPostgres(opts.dataDir, { onLost: opts.onLost });
  try {
    return await openPostgres({ kind: "embedded", connection: embedded.connection, sessions: embedded.connection, poolSize, timeouts, embedded });
  } catch (err) {
    await embedded.stop();
    throw err;
  }
}

async function openPostgres(o: {
  kind: Database["kind"];
  connection: Connection;
  /** Where the sessions of their own go (LISTEN, the set-up lock): the server itself, past a pooler. */
  sessions: Connection;
  poolSize: number;
  timeouts: Timeouts;
  embedded?: EmbeddedPostgres;
  startTag?: string | undefined;
  replicas?: ReplicaOptions | undefined;
}): Promise<Database> {
  const { kind, connection, sessions, poolSize, timeouts, embedded, startTag, replicas } = o;
  const pool = new pg.Pool({ ...bounded(connection, timeouts), max: poolSize });
  // A broken idle connection must not take the process down; the pool replaces it.
  pool.on("error", () => {});
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  const writer = transactionBoundPrisma();
  // The sessions of their own run migrations: their statements are not limited, their connections are.
  const sessionsBounded = bounded(sessions, { connectMs: timeouts.connectMs });
  const listener = new NotificationListener(sessionsBounded, timeouts.connectMs);
  const router = replicas?.urls.length ? new ReadRouter(pool, replicas) : undefined;
  await router?.start();
  const readers = router ? new PrismaClient({ adapter: new PrismaPg(router.pool) }) : prisma;
  const committedAt = router ? (position: string) => router.committedAt(position) : undefined;
  const db: Omit<Database, "primary"> & { primary?: Database } = {
    kind,
    startTag,
    prisma,
    pool,
    reads: { prisma: readers, pool: router?.pool ?? pool },
    changedElsewhere: () => router?.changedElsewhere(),
    readPosition: () => router?.position(),
    readAfter: (position) => router?.readAfter(position),
    readStatus: () => router?.status(),
    failovers: () => connection.failovers?.() ?? 0,
    connection,
    sessions: sessionsBounded,
    writer,
    transaction: (fn, options) => runTransaction(pool, fn, { committedAt, maintenance: options?.maintenance }),
    async execScript(sql) {
      await pool.query(sql);
    },
    listen: (channel, fn) => listener.listen(channel, fn),
    listening: () => listener.listening,
    async notificationsArrive(ms = 2_000) {
      const token = randomUUID();
      let heard!: () => void;
      const arrived = new Promise<boolean>((resolve) => {
        heard = () => resolve(true);
      });
      const stop = await listener.listen(PROBE_CHANNEL, (payload) => payload === token && heard());
      try {
        await pool.query("SELECT pg_notify($1, $2)", [PROBE_CHANNEL, token]);
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), ms);
        });
        const ok = await Promise.race([arrived, late]);
        clearTimeout(timer);
        return ok;
      } finally {
        await stop();
      }
    },
    async ping() {
      await pool.query("select 1");
    },
    async close() {
      await router?.close();
      if (readers !== prisma) await readers.$disconnect();
      await prisma.$disconnect();
      await writer.$disconnect();
      await listener.close();
      await pool.end();
      await embedded?.stop();
    },
  };
  // The primary's view is the same database with its reads where its writes are; it is its own primary.
  const primary: { primary?: Database } & Omit<Database, "primary"> = router ? { ...db, reads: { prisma, pool } } : db;
  primary.primary = primary as Database;
  db.primary = primary as Database;
  return db as Database;
}
