import pg from "pg";
import { parse } from "pg-connection-string";
import { parseDatabaseUrl } from "../config/database-url.js";

/**
 * Connection settings, with the client class that finds the primary when the URL names several servers, and how
 * often it found another one than before (a failover seen).
 */
export type Connection = pg.ClientConfig & { Client?: typeof pg.Client; failovers?: () => number };

/** A session of its own on the database (LISTEN, the set-up lock); `applicationName` names it in `pg_stat_activity`. */
export function newClient(connection: Connection, applicationName?: string): pg.Client {
  if (!applicationName) return new (connection.Client ?? pg.Client)(connection);
  // node-postgres lets a URL's parameters win over the settings beside it: the URL is taken apart first, so that
  // an application_name in DATABASE_URL (the operator's, for the pool) does not rename this session too.
  const { connectionString, ...settings } = connection;
  const fromUrl = connectionString ? (parse(connectionString) as pg.ClientConfig) : {};
  return new (connection.Client ?? pg.Client)({ ...settings, ...fromUrl, application_name: applicationName });
}

/**
 * The connection settings of DATABASE_URL. With several servers (`h1:5432,h2:5432`: after a failover a standby
 * of the old primary took over), each new connection goes to the server found last, as libpq's
 * `target_session_attrs` says: the first in the list that answers and, when only a writable one will do
 * (read-write, the default here), is no standby: PostgreSQL (14+) says so at start-up (`in_hot_standby`). A
 * connection that fails, or meets a standby, makes the next one look again (one probe connection per server, in
 * order, each given `connectMs` to answer); the call that met it is answered UNAVAILABLE, as any call while the
 * database is away.
 */
export function connectionOf(url: string, connectMs: number): Connection {
  const parsed = parseDatabaseUrl(url);
  if (parsed.hosts.length < 2) return { connectionString: url };
  const base = parse(parsed.single) as pg.ClientConfig;
  const { hosts, writable } = parsed;
  let current = 0;
  /** Times another server than the one found before took the writes (the first finding is none). */
  let failovers = 0;
  let found = false;
  /** Whether `current` must be looked for again before the next connection: at first, and after a failure. */
  let lost = true;
  let locating: Promise<void> | undefined;
  /** Asks the servers in the order given, one connection each, for the first that will do; none: `current` stays. */
  const locate = () =>
    (locating ??= (async () => {
      for (const [i, { host, port }] of hosts.entries()) {
        // A server whose packets are dropped holds the probe for the connect limit, then the next one is asked.
        const probe = new pg.Client({ ...base, host, port, connectionTimeoutMillis: connectMs });
        probe.on("error", () => {});
        const readOnly = watchReadOnly(probe);
        try {
          await probe.connect();
        } catch {
          continue;
        } finally {
          await probe.end().catch(() => {});
        }
        if (writable && readOnly()) continue;
        if (found && i !== current) failovers++;
        current = i;
        found = true;
        lost = false;
        return;
      }
    })().finally(() => {
      locating = undefined;
    }));

  class PrimaryClient extends pg.Client {
    // pg-pool connects with a callback, the LISTEN client and the set-up lock with the promise.
    override connect(): Promise<pg.Client>;
    override connect(callback: (err: Error | null, client?: pg.Client) => void): void;
    override connect(callback?: (err: Error | null, client?: pg.Client) => void): Promise<pg.Client> | undefined {
      const connecting = this.connectToPrimary().then(() => this as pg.Client);
      if (!callback) return connecting;
      connecting.then((client) => callback(null, client), callback);
      return undefined;
    }

    private async connectToPrimary(): Promise<void> {
      if (lost) await locate();
      const { host, port } = hosts[current]!;
      const self = this as unknown as { host: string; port: number; connectionParameters: { host: string; port: number } };
      self.host = self.connectionParameters.host = host;
      self.port = self.connectionParameters.port = port;
      const readOnly = watchReadOnly(this);
      try {
        await super.connect();
      } catch (err) {
        lost = true;
        throw err;
      }
      if (writable && readOnly()) {
        lost = true;
        await this.end().catch(() => {});
        // 25006 (read-only transaction): the call that met it is UNAVAILABLE, the next connection looks again
        throw Object.assign(new Error(`${host}:${port} of DATABASE_URL is a standby, not the primary`), { code: "25006" });
      }
    }
  }
  return { ...base, Client: PrimaryClient, failovers: () => failovers };
}

/** How long to wait for a database server that does not answer (it stopped, or a network drops its packets). */
export interface Timeouts {
  /** A new connection's start-up. */
  connectMs: number;
  /** A statement's answer; 0 or absent: no limit (sessions that run migrations, maintenance). */
  queryMs?: number;
}

/**
 * The same connection settings, whose connections give up on a server that does not answer instead of waiting
 * for ever: a refused or reset connection fails at once, but one whose packets are dropped (a host gone, a
 * firewall, a cloud's moved address) would hold the call until the operating system gave up, minutes later.
 * TCP keep-alive has a dead idle connection noticed as well. The settings go to each connection, not to the pool:
 * the pool's own `connectionTimeoutMillis` would also bound the wait for a free connection under load.
 */
export function bounded(connection: Connection, timeouts: Timeouts): Connection {
  const Base = connection.Client ?? pg.Client;
  const limits: pg.ClientConfig = {
    connectionTimeoutMillis: timeouts.connectMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    ...(timeouts.queryMs ? { query_timeout: timeouts.queryMs } : {}),
  };
  class BoundedClient extends Base {
    constructor(config?: string | pg.ClientConfig) {
      super({ ...(typeof config === "string" ? { connectionString: config } : config), ...limits });
      // A connection that ends while checked out of the pool (closed below, or by the server) emits "error"; the pool
      // listens only while it is idle, and Prisma's transactions not at all: without a listener the process would
      // end. Its statements fail with the error; the pool discards it at release.
      this.on("error", () => {});
    }

    // node-postgres fails an unanswered statement in Node only: the connection still waits for the answer, and what
    // is queued behind it (a ROLLBACK, Prisma's too) waits as well, or is dropped unsent while the transaction stays
    // open on a connection that goes back to the pool. Closing the connection fails them at once; the server rolls
    // back what it had begun, and the pool discards the client.
    override query(...args: unknown[]): never {
      const dropIfUnanswered = (err: unknown) => {
        if (err instanceof Error && err.message === UNANSWERED)
          (this as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
      };
      const last = args.at(-1);
      const submittable = args[0] as { submit?: unknown; callback?: (err: unknown, result: unknown) => void } | undefined;
      if (typeof last === "function") {
        args[args.length - 1] = (err: unknown, result: unknown) => {
          dropIfUnanswered(err);
          (last as (e: unknown, r: unknown) => void)(err, result);
        };
      } else if (typeof submittable?.submit === "function" && submittable.callback) {
        const callback = submittable.callback;
        submittable.callback = (err, result) => {
          dropIfUnanswered(err);
          callback(err, result);
        };
      }
      const sent = (super.query as (...a: unknown[]) => unknown).apply(this, args);
      if (sent instanceof Promise) sent.catch(dropIfUnanswered);
      return sent as never;
    }
  }
  return { ...connection, Client: BoundedClient };
}

/** node-postgres's error for a statement not answered within query_timeout. */
const UNANSWERED = "Query read timeout";

/** Whether the server said at start-up that it takes no writes (PostgreSQL 14+: a standby, or read-only by default). */
function watchReadOnly(client: pg.Client): () => boolean {
  let readOnly = false;
  const connection = (client as unknown as { connection: NodeJS.EventEmitter }).connection;
  connection.on("parameterStatus", (m: { parameterName: string; parameterValue: string }) => {
    if ((m.parameterName === "in_hot_standby" || m.parameterName === "default_transaction_read_only") && m.parameterValue === "on") readOnly = true;
  });
  return () => readOnly;
}
