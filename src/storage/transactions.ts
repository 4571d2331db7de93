import { AsyncLocalStorage } from "node:async_hooks";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient } from "../../gen/prisma/client.js";

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
  client: pg.PoolClient;
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
 * Runs `fn` in a transaction on one connection of `pool`: BEGIN, `fn`, COMMIT; ROLLBACK when it throws.
 * A transaction left idle for `idleTimeoutMs` is ended by the server, so a stuck command cannot hold its
 * locks forever. A connection that failed is discarded instead of going back to the pool.
 */
export async function runTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>, idleTimeoutMs = 30_000): Promise<T> {
  const client = await pool.connect();
  const bound: Bound = { client, open: true, savepoints: 0 };
  let broken: Error | undefined;
  running++;
  try {
    // One round trip: BEGIN and the idle limit as one simple-protocol script.
    await client.query(`BEGIN; SET LOCAL idle_in_transaction_session_timeout = ${Math.max(1, Math.floor(idleTimeoutMs))}`);
    const result = await current.run(bound, () => fn(client));
    bound.open = false;
    await client.query("COMMIT");
    return result;
  } catch (err) {
    bound.open = false;
    try {
      await client.query("ROLLBACK");
    } catch (rollbackFailed) {
      broken = rollbackFailed as Error;
    }
    throw err;
  } finally {
    if (--running === 0) current.disable();
    client.release(broken);
  }
}
