import { AsyncLocalStorage } from "node:async_hooks";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient } from "../../gen/prisma/client.js";

/** A connection as the transaction's statements use it. */
export type Sql = Pick<pg.PoolClient, "query">;

/**
 * Write transactions on a `pg` connection, with Prisma's model API bound to it.
 *
 * Why not `prisma.$transaction(async tx => ...)`: measured on this machine (`bench/transactions.ts`), an
 * interactive Prisma transaction costs 2-3 ms of Node CPU for BEGIN, three statements and COMMIT, the
 * same transaction on a `pg` client 0.4-0.5 ms; on a 2-core server that CPU is most of a write's cost.
 * Here BEGIN, COMMIT, the event store's own statements and any statement a command sends itself go
 * straight to the connection, and `writer` (a Prisma client whose "pool" is this connection) keeps the
 * model API for the commands and reducers that use it, at the cost of a plain (non-interactive) query.
 *
 * How a query finds its transaction: the transaction's connection is kept in an AsyncLocalStorage for the
 * duration of the callback, and the writer's pool sends every query there. Used outside a transaction the
 * writer refuses, so a statement can never escape into autocommit.
 */
interface Bound {
  client: Sql;
  open: boolean;
  savepoints: number;
}

const current = new AsyncLocalStorage<Bound>();
/**
 * Transactions running now. While an AsyncLocalStorage is enabled, Node 20 runs async hooks for every promise
 * of the process (measured: a request of 50 awaits took twice as long), so `current` is disabled whenever no
 * transaction runs, and reads between writes do not pay for it; `run` enables it again.
 */
let running = 0;

/**
 * Whether the transactions' AsyncLocalStorage is enabled (for tests: only while one runs). Node 20's
 * AsyncLocalStorage keeps this in `enabled`, which `run` sets and `disable` clears.
 */
export function transactionContextEnabled(): boolean {
  return (current as unknown as { enabled: boolean }).enabled;
}

function boundOrThrow(): Bound {
  const bound = current.getStore();
  if (!bound?.open) throw new Error("the write client was used outside a write transaction");
  return bound;
}

/**
 * What Prisma sees as its pool. Queries go to the connection of the running transaction. A statement
 * plan Prisma runs in a transaction of its own (an upsert it cannot do in one statement, nested writes)
 * asks for a connection: it gets the same one, and its BEGIN/COMMIT/ROLLBACK become a savepoint, so it
 * commits or rolls back with the surrounding transaction instead of ending it.
 */
class TransactionPool extends pg.Pool {
  // Prisma calls query(config) with one argument; the override keeps pg's signature for the type checker.
  override query(...args: unknown[]): never {
    const bound = boundOrThrow();
    return (bound.client.query as (...a: unknown[]) => never)(...args);
  }

  override connect(): never {
    const bound = boundOrThrow();
    const name = `prisma_${++bound.savepoints}`;
    const nested = {
      query(config: pg.QueryConfig) {
        const sql = config.text.trim().toUpperCase();
        const text =
          sql === "BEGIN"
            ? `SAVEPOINT ${name}`
            : sql === "COMMIT"
              ? `RELEASE SAVEPOINT ${name}`
              : sql === "ROLLBACK"
                ? `ROLLBACK TO SAVEPOINT ${name}`
                : config.text;
        return bound.client.query({ ...config, text });
      },
      on() {},
      removeListener() {},
      release() {},
    };
    return Promise.resolve(nested) as never;
  }
}

/** A Prisma client over `TransactionPool`: it works only inside `runTransaction`. */
export function transactionBoundPrisma(): PrismaClient {
  const client = new PrismaClient({ adapter: new PrismaPg(new TransactionPool({ max: 1 })) });
  return withoutBatchedLookups(client);
}

/**
 * A unique filter as `findFirst` takes it: a compound key (`a_b: { a, b }`, Prisma names it after its
 * fields) becomes its fields.
 */
function asFirstFilter(args: { where?: Record<string, unknown> } | undefined) {
  if (!args?.where) return args;
  const where: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args.where)) {
    const compound = typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).join("_") === key;
    if (compound) Object.assign(where, value);
    else where[key] = value;
  }
  return { ...args, where };
}

/**
 * Prisma batches `findUnique` calls made in the same tick into one query, across callers (its "dataloader";
 * only calls inside one of its own interactive transactions are kept apart). Two commands running at once
 * would then read through one transaction's connection. `findFirst` with the same unique filter returns the
 * same row and is never batched, so the writer answers `findUnique` with it.
 */
function withoutBatchedLookups(client: PrismaClient): PrismaClient {
  const delegates = new Map<PropertyKey, unknown>();
  return new Proxy(client, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      // The client's own methods ($disconnect, $queryRaw, ...) run on the client itself, not on this proxy.
      if (typeof value === "function") return value.bind(target);
      if (typeof key !== "string" || key.startsWith("$") || typeof value !== "object" || value === null || !("findFirst" in value)) return value;
      let delegate = delegates.get(key);
      if (!delegate) {
        const model = value as Record<string, unknown>;
        delegate = new Proxy(model, {
          get(m, op) {
            const first = op === "findUnique" ? m.findFirst : op === "findUniqueOrThrow" ? m.findFirstOrThrow : undefined;
            if (first) return (args?: { where?: Record<string, unknown> }) => (first as (a: unknown) => unknown)(asFirstFilter(args));
            return m[op as string];
          },
        });
        delegates.set(key, delegate);
      }
      return delegate;
    },
  });
}

/**
 * The statements a transaction starts with: BEGIN and its idle limit (a stuck command cannot hold its locks forever).
 * With a limit on statements (`bounded`), the server's own, a little shorter: a statement waiting for a lock (behind
 * a rebuild, say) is cancelled there and lets go of what it holds, instead of waiting on after the call gave up.
 */
function openingStatements(idleTimeoutMs: number, queryTimeoutMs: number | undefined): string[] {
  const ms = (n: number) => Math.max(1, Math.floor(n));
  return [
    "BEGIN",
    `SET LOCAL idle_in_transaction_session_timeout = ${ms(idleTimeoutMs)}`,
    ...(queryTimeoutMs ? [`SET LOCAL statement_timeout = ${ms(queryTimeoutMs * 0.9)}`] : []),
  ];
}

/** What pg's Query does with the server's messages, beyond its public type. */
interface QueryInternals {
  submit(connection: PgConnection): Error | null;
  handleCommandComplete(msg: unknown, connection: PgConnection): void;
  callback?: (err: Error | undefined, result: pg.QueryResult) => void;
}

interface PgConnection {
  stream: { cork?: () => void; uncork?: () => void };
  parse(q: { text: string }): void;
  bind(config?: object): void;
  execute(config?: object): void;
}

/**
 * The first statement of a transaction, with the opening statements in front of it in the same round trip:
 * each opening statement goes as Parse/Bind/Execute and the statement follows as pg sends it, so one Sync
 * ends them all and the server answers once (pgjdbc and Npgsql send BEGIN the same way). Their completions
 * are not results of the statement. Only an unnamed statement with parameters is sent so: pg sends those
 * with the extended protocol (a text without parameters may hold several statements, which that refuses).
 */
function afterOpening(opening: string[], args: unknown[]): pg.Query | undefined {
  const [first, second] = args;
  const config = (typeof first === "string" ? { text: first, values: second } : first) as pg.QueryConfig | undefined;
  const values = config?.values ?? (Array.isArray(second) ? second : undefined);
  if (!config || typeof config.text !== "string" || config.name || !Array.isArray(values) || !values.length || typeof args.at(-1) === "function") {
    return undefined;
  }
  const query = new pg.Query({ ...config, values });
  const internals = query as unknown as QueryInternals;
  const submit = internals.submit.bind(query);
  const complete = internals.handleCommandComplete.bind(query);
  let openingLeft = opening.length;
  internals.submit = (connection) => {
    connection.stream.cork?.();
    try {
      for (const text of opening) {
        connection.parse({ text });
        connection.bind();
        connection.execute();
      }
      return submit(connection);
    } finally {
      connection.stream.uncork?.();
    }
  };
  internals.handleCommandComplete = (msg, connection) => {
    if (openingLeft > 0) openingLeft--;
    else complete(msg, connection);
  };
  return query;
}

/**
 * The transaction's connection as its statements see it. Nothing is sent before the first statement, which
 * takes BEGIN along (`afterOpening`); a first statement that cannot is preceded by BEGIN in a round trip of
 * its own. A transaction that sends no statement never begins, and nothing is committed.
 */
class TransactionConnection {
  begun = false;
  /** BEGIN sent in a round trip of its own: every statement waits for it, in the order they were sent. */
  private openedAlone: Promise<unknown> | undefined;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly opening: string[],
  ) {}

  query(...args: unknown[]): never {
    return this.send(args) as never;
  }

  private send(args: unknown[]): Promise<unknown> {
    const query = (this.client.query as (...a: unknown[]) => Promise<unknown>).bind(this.client);
    if (this.begun) return this.openedAlone ? this.openedAlone.then(() => query(...args)) : query(...args);
    this.begun = true;
    const opened = afterOpening(this.opening, args);
    if (!opened) {
      // Chained, not queued behind it at once (pg deprecates a second query sent while one runs): when BEGIN
      // fails, no statement runs outside the transaction.
      this.openedAlone = query(this.opening.join("; "));
      return this.openedAlone.then(() => query(...args));
    }
    return new Promise((resolve, reject) => {
      (opened as unknown as QueryInternals).callback = (err, result) => (err ? reject(err) : resolve(result));
      query(opened);
    });
  }
}

/**
 * Runs `fn` in a transaction on one connection of `pool`: BEGIN, `fn`, COMMIT; ROLLBACK when it throws.
 * BEGIN travels with the first statement (`TransactionConnection`): a write is a round trip shorter.
 * A transaction left idle for `idleTimeoutMs` is ended by the server, so a stuck command cannot hold its
 * locks forever. A connection that failed is discarded instead of going back to the pool. With `committedAt`,
 * the WAL position the commit reached is asked for in the COMMIT's own round trip and handed to it (read
 * replicas serve this process's reads once they have replayed it, `reads.ts`).
 */
export async function runTransaction<T>(
  pool: pg.Pool,
  fn: (sql: Sql) => Promise<T>,
  options: { idleTimeoutMs?: number; committedAt?: (position: string) => void; maintenance?: boolean | undefined } = {},
): Promise<T> {
  const { idleTimeoutMs = 30_000, committedAt, maintenance } = options;
  const client = await pool.connect();
  const parameters = connectionParameters(client);
  const limit = maintenance ? withoutQueryTimeout(parameters) : undefined;
  const connection = new TransactionConnection(client, openingStatements(idleTimeoutMs, parameters.query_timeout));
  const bound: Bound = { client: connection, open: true, savepoints: 0 };
  let broken: Error | undefined;
  // The server may end the connection between two statements (a restart: 57P01, a crash): the client then emits
  // "error", which would end the process without a listener. The next statement fails with it; the connection is
  // discarded at release.
  const lost = (err: Error) => {
    broken ??= err;
  };
  client.on("error", lost);
  running++;
  try {
    const result = await current.run(bound, () => fn(connection));
    bound.open = false;
    if (connection.begun && committedAt) {
      // The insert position is past the commit record as soon as COMMIT returns, whatever synchronous_commit says.
      const [, position] = (await client.query("COMMIT; SELECT pg_current_wal_insert_lsn()::text AS position")) as unknown as pg.QueryResult[];
      committedAt(position!.rows[0].position);
    } else if (connection.begun) await client.query("COMMIT");
    return result;
  } catch (err) {
    bound.open = false;
    try {
      if (connection.begun) await client.query("ROLLBACK");
    } catch (rollbackFailed) {
      broken = rollbackFailed as Error;
    }
    throw err;
  } finally {
    if (--running === 0) current.disable();
    limit?.restore();
    client.removeListener("error", lost);
    client.release(broken);
  }
}

/** The connection's settings as node-postgres reads them at each statement (its `query_timeout`). */
const connectionParameters = (client: pg.PoolClient) =>
  (client as unknown as { connectionParameters: { query_timeout?: number | undefined } }).connectionParameters;

/**
 * Lifts the connection's statement limit until `restore` (a rebuild's DELETE of a large table may take minutes).
 * node-postgres reads it from the connection's parameters at each statement.
 */
function withoutQueryTimeout(parameters: { query_timeout?: number | undefined }): { restore(): void } {
  const before = parameters.query_timeout;
  parameters.query_timeout = undefined;
  return {
    restore() {
      parameters.query_timeout = before;
    },
  };
}
