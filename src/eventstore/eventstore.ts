import { randomUUID } from "node:crypto";
import { type Clock, systemClock } from "../domain/clock.js";
import { errors, isUniqueViolation } from "../errors/errors.js";
import type { Prisma as PrismaNamespace } from "../../gen/prisma/client.js";
import type { Database } from "../storage/database.js";
import type { Sql } from "../storage/transactions.js";
import type { EventDefinition } from "./definition.js";

/** Prisma's model API inside a command's transaction (the database's `writer`). */
export type Tx = PrismaNamespace.TransactionClient;

/** The command's transaction connection, for statements sent without Prisma. */
export type { Sql } from "../storage/transactions.js";

/**
 * An event to append. Commands make them with their event's definition (`definition.ts`), which fixes the
 * type, the aggregate type and the payload's shape; the payload is stored as JSON.
 */
export interface NewEvent<P extends object = object> {
  aggregateType: string;
  aggregateId: string;
  /** Dotted `<aggregate>.<noun>.<verb>`, e.g. `settings.language.set`. */
  type: string;
  payload: P;
  /** The context that owns the aggregate: "" for the system, else an instance or organisation ID. */
  resourceOwner: string;
}

/**
 * An appended event. Read back from the log (subscriptions, `readAfter`) its payload is plain JSON of any
 * shape; a reducer registered with an event's definition sees the payload typed by that definition.
 */
export interface StoredEvent<P extends object = Record<string, unknown>> extends NewEvent<P> {
  instanceId: string;
  position: bigint;
  sequence: number;
  creator: string;
  createdAt: Date;
}

/**
 * Updates a projection from one event, inside the transaction that appends it: through Prisma's model API
 * (`tx`), or, on hot paths, with statements of its own on the transaction's connection (`sql`).
 */
export type Reducer<P extends object = object> = (tx: Tx, event: StoredEvent<P>, sql: Sql) => Promise<void>;

export const EVENTS_CHANNEL = "svc_events";

/** PostgreSQL broke a lock cycle by failing this transaction (40P01): run the command again. */
function isDeadlock(err: unknown): boolean {
  const e = err as { code?: string; message?: string; meta?: unknown } | undefined;
  return e?.code === "40P01" || e?.code === "P2034" || /deadlock detected|40P01/.test(`${e?.message ?? ""} ${JSON.stringify(e?.meta ?? "")}`);
}

const SEQUENCE_KEY = "events_instance_id_aggregate_type_aggregate_id_sequence_key";

/** Another transaction appended to the same aggregate first: the (aggregate, sequence) key refused ours. */
function isSequenceConflict(err: unknown): boolean {
  const e = err as { code?: string; constraint?: string } | undefined;
  return (e?.code === "23505" && e.constraint === SEQUENCE_KEY) || isUniqueViolation(err, "Event");
}

const MAX_ATTEMPTS = 8;
/** How long, at most, subscriptions share one read of the log, and how many events it reads at least. */
const SHARED_READ_MS = 100;
const SHARED_READ_LIMIT = 100;
/** NOTIFY payloads are limited to 8000 bytes; past this the notice says "everything changed". */
const MAX_NOTICE = 7_000;

/**
 * One statement appends a command's events, sets their sequences, and tells other processes what changed.
 * - Sequences: an aggregate the command locked (`sequenceOf`) continues from the sequence read under its
 *   lock; any other aggregate (a new one, typically) from its current maximum, read in the same statement.
 *   Either way the unique key on (aggregate, sequence) refuses a concurrent append, and the command reruns.
 * - Order: positions are taken in the order given; the transaction's ID (`tx_id`) orders them across
 *   transactions for readers (see `readAfter`), so no global lock is needed.
 * - The NOTIFY is sent at commit, and only if the transaction commits (PostgreSQL queues it until then).
 */
const APPEND = `
WITH input AS (
  SELECT * FROM unnest($2::text[], $3::text[], $4::int[], $5::int[], $6::text[], $7::text[], $8::text[])
    WITH ORDINALITY AS i(aggregate_type, aggregate_id, base, ordinal, type, payload, resource_owner, n)
), appended AS (
  INSERT INTO events (instance_id, aggregate_type, aggregate_id, sequence, type, payload, creator, resource_owner)
  SELECT $1, i.aggregate_type, i.aggregate_id,
    COALESCE(i.base, (SELECT COALESCE(MAX(e.sequence), 0) FROM events e
      WHERE e.instance_id = $1 AND e.aggregate_type = i.aggregate_type AND e.aggregate_id = i.aggregate_id)) + i.ordinal,
    i.type, i.payload::jsonb, $9, i.resource_owner
  FROM input i ORDER BY i.n
  RETURNING position, sequence, created_at
)
SELECT a.position, a.sequence, a.created_at FROM appended a CROSS JOIN (SELECT pg_notify('${EVENTS_CHANNEL}', $10)) n ORDER BY a.position`;

/** What an append statement returns for each event, in the order given. */
interface AppendedRow {
  /** bigint, as pg returns it: text. */
  position: string;
  sequence: number;
  created_at: Date;
}

/** The NOTIFY payload: the changed aggregates as `[type, id]` pairs, or `*` when they do not fit. */
export function changeNotice(events: readonly Pick<NewEvent, "aggregateType" | "aggregateId">[]): string {
  const pairs = new Map(events.map((e) => [`${e.aggregateType}\u0000${e.aggregateId}`, [e.aggregateType, e.aggregateId]]));
  const notice = JSON.stringify([...pairs.values()]);
  return notice.length > MAX_NOTICE ? "*" : notice;
}

/** The changed aggregates a NOTIFY payload names; undefined when it says everything may have changed. */
export function parseChangeNotice(payload: string): { aggregateType: string; aggregateId: string }[] | undefined {
  try {
    const pairs: unknown = JSON.parse(payload);
    if (!Array.isArray(pairs)) return undefined;
    const out: { aggregateType: string; aggregateId: string }[] = [];
    for (const p of pairs) {
      if (!Array.isArray(p) || typeof p[0] !== "string" || typeof p[1] !== "string") return undefined;
      out.push({ aggregateType: p[0], aggregateId: p[1] });
    }
    return out;
  } catch {
    return undefined;
  }
}

/** What a command sees inside its transaction. */
export class EventWriter {
  private readonly expected = new Map<string, number>();
  private readonly locked = new Set<string>();
  readonly pushed: StoredEvent[] = [];

  constructor(
    /** Prisma's model API, in this transaction. */
    readonly tx: Tx,
    /** The transaction's connection, for hot statements without Prisma's cost. */
    readonly sql: Sql,
    private readonly reducers: Map<string, Reducer[]>,
    /** The time of the command's decisions (expiries, lockouts, key rotation): the store's clock. */
    readonly clock: Clock = systemClock,
  ) {}

  private static key(instanceId: string, type: string, id: string) {
    return `${instanceId}\u0000${type}\u0000${id}`;
  }

  /**
   * Takes the aggregate's transaction-scoped lock: a concurrent command on the same aggregate waits here
   * until this transaction ends, and then reads fresh state. Commands that change an existing aggregate
   * call it before they read, so decisions are never made on stale state. Every statement after it sees
   * what the previous holder committed, the append's own sequence read included, so locking costs one round
   * trip. The unique key on (aggregate, sequence) stays as the backstop: an append that still conflicts
   * reruns the command.
   */
  async lock(instanceId: string, aggregateType: string, aggregateId: string): Promise<void> {
    const key = EventWriter.key(instanceId, aggregateType, aggregateId);
    if (this.locked.has(key)) return;
    await this.sql.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`${instanceId}|${aggregateType}|${aggregateId}`]);
    this.locked.add(key);
  }

  /** The aggregate's current sequence (0 when it has no events), read under its lock (`lock`). */
  async sequenceOf(instanceId: string, aggregateType: string, aggregateId: string): Promise<number> {
    const key = EventWriter.key(instanceId, aggregateType, aggregateId);
    const known = this.expected.get(key);
    if (known !== undefined) return known;
    // A statement of its own, after the lock's: in READ COMMITTED a statement reads the snapshot taken when
    // it started, so a maximum read in the statement that waited for the lock could miss the holder's commit.
    await this.lock(instanceId, aggregateType, aggregateId);
    const { rows } = await this.sql.query<{ seq: number }>(
      "SELECT COALESCE(MAX(sequence), 0)::int AS seq FROM events WHERE instance_id = $1 AND aggregate_type = $2 AND aggregate_id = $3",
      [instanceId, aggregateType, aggregateId],
    );
    const row = rows[0];
    const seq = row?.seq ?? 0;
    this.expected.set(key, seq);
    return seq;
  }

  async push(instanceId: string, creator: string, events: NewEvent[]): Promise<StoredEvent[]> {
    if (!events.length) return [];
    // Each event's sequence: the aggregate's base (known when locked or appended to before in this
    // transaction, else read by the statement) plus its place among this call's events of that aggregate.
    const ordinals = new Map<string, number>();
    const keys = events.map((e) => EventWriter.key(instanceId, e.aggregateType, e.aggregateId));
    const ordinal = keys.map((k) => {
      const n = (ordinals.get(k) ?? 0) + 1;
      ordinals.set(k, n);
      return n;
    });
    const payloads = events.map((e) => JSON.stringify(e.payload));
    const { rows } = await this.sql.query<AppendedRow>(APPEND, [
      instanceId,
      events.map((e) => e.aggregateType),
      events.map((e) => e.aggregateId),
      keys.map((k) => this.expected.get(k) ?? null),
      ordinal,
      events.map((e) => e.type),
      payloads,
      events.map((e) => e.resourceOwner),
      creator,
      changeNotice(events),
    ]);
    const out: StoredEvent[] = events.map((e, i) => {
      const row = rows[i]!;
      this.expected.set(keys[i]!, row.sequence);
      // Reducers see the payload as the log stores it (JSON: no undefined fields, no class instances).
      const payload = payloadOf(JSON.parse(payloads[i]!));
      return { ...e, payload, instanceId, creator, position: BigInt(row.position), sequence: row.sequence, createdAt: row.created_at };
    });
    for (const stored of out) for (const reduce of this.reducers.get(stored.type) ?? []) await reduce(this.tx, stored, this.sql);
    this.pushed.push(...out);
    return out;
  }
}

export interface SubscribeOptions {
  /** Events per batch (default 100). */
  batchSize?: number;
  /** Poll interval when no notification arrives (default 1000 ms). */
  pollMs?: number;
  /** Delay after a failed batch, doubled up to 30 s (default 200 ms). */
  retryMs?: number;
  /**
   * How long to wait after a commit is announced before reading (default 20 ms): commits arriving meanwhile
   * are read in the same batch, instead of one read and one cursor update per commit.
   */
  coalesceMs?: number;
  /**
   * How long the stored cursor may lag behind batches in which nothing was wanted (default 5 s). Skipped
   * events are read and filtered again after a restart, which costs a read but never changes what is handed
   * over; a batch with wanted events stores its cursor at once.
   */
  storeEveryMs?: number;
  /** Only these events are handed over (the position still moves past the others). */
  filter?: (e: StoredEvent) => boolean;
  onError?: (err: unknown) => void;
  /**
   * Seconds a process's hold on the subscription lasts unless renewed (default 10; renewed every third of it).
   * One process at a time runs a subscription of a name; another takes over from the stored cursor once the
   * holder stops (at once) or its lease runs out (a killed process).
   */
  leaseS?: number;
}

export interface Subscription {
  stop(): Promise<void>;
  /** Resolves once everything committed before this call has been handled (by whichever process holds it). */
  caughtUp(): Promise<void>;
  /** Whether this process holds the subscription now: work that must run once across processes runs only then. */
  holding(): boolean;
}

/**
 * A place in the log as readers see it: the appending transaction, then the position within it. Positions
 * alone are not an order of commits: a transaction may take position 10 and commit after another took 11.
 */
export interface Cursor {
  tx: bigint;
  position: bigint;
}

const START: Cursor = { tx: 0n, position: 0n };
const after = (a: Cursor, b: Cursor) => a.tx > b.tx || (a.tx === b.tx && a.position > b.position);

interface EventRecord {
  position: string;
  tx: string;
  instance_id: string;
  aggregate_type: string;
  aggregate_id: string;
  sequence: number;
  type: string;
  payload: unknown;
  creator: string;
  resource_owner: string;
  created_at: Date;
}

const EVENT_COLUMNS = `position, tx_id::text AS tx, instance_id, aggregate_type, aggregate_id, sequence, type, payload, creator, resource_owner, created_at`;

/** Every writer appends an object; anything else (never written) reads as an empty payload. */
function payloadOf(json: unknown): Record<string, unknown> {
  return json !== null && typeof json === "object" && !Array.isArray(json) ? (json as Record<string, unknown>) : {};
}

function toStored(r: EventRecord): StoredEvent & { tx: bigint } {
  return {
    tx: BigInt(r.tx),
    position: BigInt(r.position),
    instanceId: r.instance_id,
    aggregateType: r.aggregate_type,
    aggregateId: r.aggregate_id,
    sequence: r.sequence,
    type: r.type,
    payload: payloadOf(r.payload),
    creator: r.creator,
    resourceOwner: r.resource_owner,
    createdAt: r.created_at,
  };
}

/**
 * The events of these types after `after`, in position order, `limit` at most, read on `sql` (a projection's
 * rebuild reads them in its own transaction, under its lock: src/projections/rebuild.ts).
 */
export async function eventsOfTypes(sql: Sql, types: readonly string[], after: bigint, limit: number): Promise<StoredEvent[]> {
  const { rows } = await sql.query<EventRecord>(
    `SELECT ${EVENT_COLUMNS} FROM events WHERE type = ANY($1::text[]) AND position > $2 ORDER BY position LIMIT $3`,
    [types, after.toString(), limit],
  );
  return rows.map(toStored);
}

/** Append-only events with per-aggregate sequences, a global position, projections and durable subscriptions. */
export class EventStore {
  private readonly reducers = new Map<string, Reducer[]>();
  private readonly committed: ((events: StoredEvent[]) => void | Promise<void>)[] = [];
  private readonly appended: ((ms: number, events: number) => void)[] = [];
  private readonly handled = new Map<string, () => Cursor | undefined>();
  /** Leads the lease names of this event store's subscriptions: a process's, or its start's when workers share one. */
  private readonly instanceTag: string;
  /**
   * Counters for tests and metrics: commands retried after a conflict, and rejected after too many; reads of
   * the log by this process's subscriptions.
   */
  readonly stats = { retried: 0, rejected: 0, logReads: 0 };
  /** Commit notices received by this process's subscriptions (see `readShared`). */
  private notices = 0;
  private lastRead: { cursor: Cursor; notices: number; startedAt: number; rows: Promise<(StoredEvent & { tx: bigint })[]> } | undefined;

  constructor(
    private readonly db: Database,
    /**
     * The time of the commands' decisions (src/domain/clock.ts): the server's clock, which tests move. Also
     * their writers' (`EventWriter.clock`). Not the events' `created_at`, which the database sets.
     */
    readonly clock: Clock = systemClock,
  ) {
    this.instanceTag = db.startTag ?? randomUUID();
  }

  /**
   * Registers a projection reducer for an event (at start-up). The reducer sees the payload typed by the
   * event's definition: events of a defined type are appended only through that definition.
   */
  on<P extends object>(event: EventDefinition<P>, reducer: Reducer<P>): void {
    const list = this.reducers.get(event.type) ?? [];
    // Widened for the table of all types: `push` hands it only events of `event.type`.
    list.push(reducer as Reducer);
    this.reducers.set(event.type, list);
  }

  /**
   * Called right after a transaction that appended events commits (caches of this process drop entries here). A
   * promise it returns is awaited before the command returns (the other workers of the machine drop theirs).
   */
  onCommitted(fn: (events: StoredEvent[]) => void | Promise<void>): void {
    this.committed.push(fn);
  }

  /** Called after each committed command that appended: how long its transaction took and how many events it appended. */
  onAppended(fn: (ms: number, events: number) => void): void {
    this.appended.push(fn);
  }

  get eventTypes(): string[] {
    return [...this.reducers.keys()].sort();
  }

  /**
   * Runs a command in one transaction: its reads, its appends and the projections. A concurrent append to
   * the same aggregate makes the transaction fail; the command is then run again on fresh state, and after
   * several conflicts it is rejected with ABORTED. Never lost, never doubled.
   */
  async execute<T>(command: (w: EventWriter) => Promise<T>): Promise<{ result: T; events: StoredEvent[] }> {
    for (let attempt = 1; ; attempt++) {
      const started = performance.now();
      try {
        const out = await this.db.transaction(async (sql) => {
          const writer = new EventWriter(this.db.writer, sql, this.reducers, this.clock);
          const result = await command(writer);
          return { result, events: writer.pushed };
        });
        if (out.events.length) {
          const ms = performance.now() - started;
          const told: Promise<void>[] = [];
          for (const fn of this.committed) {
            const telling = fn(out.events);
            if (telling) told.push(telling);
          }
          for (const fn of this.appended) fn(ms, out.events.length);
          if (told.length) await Promise.all(told);
        }
        return out;
      } catch (err) {
        if (!isSequenceConflict(err) && !isDeadlock(err)) throw err;
        if (attempt >= MAX_ATTEMPTS) {
          this.stats.rejected++;
          throw errors.aborted("ES-c0nf", "the resource was changed concurrently, try again");
        }
        this.stats.retried++;
        // Jitter, so that the commands that collided do not collide again in lockstep.
        await new Promise((r) => setTimeout(r, Math.random() * 10 * attempt));
      }
    }
  }

  /**
   * The events after `cursor` in commit order, from transactions older than every transaction still
   * running (`pg_snapshot_xmin`). A transaction that took a lower position but commits later is therefore
   * never skipped: until it ends, the read stops before it; once it ends, its events come next.
   */
  async readAfter(cursor: Cursor, limit: number): Promise<(StoredEvent & { tx: bigint })[]> {
    const { rows } = await this.db.pool.query<EventRecord>(
      `SELECT ${EVENT_COLUMNS} FROM events
       WHERE (tx_id, position) > ($1::text::xid8, $2) AND tx_id < pg_snapshot_xmin(pg_current_snapshot())
       ORDER BY tx_id, position LIMIT $3`,
      [cursor.tx.toString(), cursor.position.toString(), limit],
    );
    return rows.map(toStored);
  }

  /**
   * `readAfter` for the subscription loops. The subscriptions of a process wake on the same notice and most
   * often stand at the same cursor: one read serves them all (one statement per commit instead of one per
   * subscription). A read is shared only while no notice has come since it began and for `SHARED_READ_MS`,
   * so a poll still reads afresh. Any prefix of a read is a correct answer, so a smaller batch takes one.
   */
  private readShared(cursor: Cursor, limit: number): Promise<(StoredEvent & { tx: bigint })[]> {
    const last = this.lastRead;
    const now = performance.now();
    if (last && last.notices === this.notices && now - last.startedAt < SHARED_READ_MS && !after(last.cursor, cursor) && !after(cursor, last.cursor)) {
      return last.rows.then((rows) => (rows.length > limit ? rows.slice(0, limit) : rows));
    }
    this.stats.logReads++;
    const rows = this.readAfter(cursor, Math.max(limit, SHARED_READ_LIMIT));
    this.lastRead = { cursor, notices: this.notices, startedAt: now, rows };
    rows.catch(() => {
      if (this.lastRead?.rows === rows) this.lastRead = undefined;
    });
    return rows.then((r) => (r.length > limit ? r.slice(0, limit) : r));
  }

  /** The event at a position: a delivery retried later reads its event again. */
  async eventAt(position: bigint): Promise<StoredEvent | undefined> {
    const { rows } = await this.db.pool.query<EventRecord>(`SELECT ${EVENT_COLUMNS} FROM events WHERE position = $1`, [position.toString()]);
    return rows[0] ? toStored(rows[0]) : undefined;
  }

  /** The newest committed event's place in commit order. */
  async latest(): Promise<Cursor> {
    const { rows } = await this.db.pool.query<{ tx: string; position: string }>(
      "SELECT tx_id::text AS tx, position FROM events ORDER BY tx_id DESC, position DESC LIMIT 1",
    );
    return rows[0] ? { tx: BigInt(rows[0].tx), position: BigInt(rows[0].position) } : START;
  }

  /** How far each subscription this process holds has handled (for metrics: its lag). */
  subscriptionCursors(): { name: string; cursor: Cursor }[] {
    return [...this.handled].flatMap(([name, cursor]) => {
      const at = cursor();
      return at ? [{ name, cursor: at }] : [];
    });
  }

  /**
   * Hands every event after the subscription's stored cursor to `handle`, in commit order, at least once:
   * the cursor moves only after `handle` resolves, and it is stored, so a restart resumes where it stopped.
   * A failing batch is retried with backoff, from after the last event `handle` reported `done` (a handler whose
   * work cannot be undone, a call to a target, reports each event, so a failure half-way, the database gone
   * mid-batch, does not do the first half again).
   */
  subscribe(name: string, handle: (events: StoredEvent[], done: (e: StoredEvent) => void) => Promise<void>, opts: SubscribeOptions = {}): Subscription {
    const batchSize = opts.batchSize ?? 100;
    const pollMs = opts.pollMs ?? 1000;
    const coalesceMs = opts.coalesceMs ?? 20;
    const storeEveryMs = opts.storeEveryMs ?? 5000;
    const leaseS = opts.leaseS ?? 10;
    const prisma = this.db.prisma;
    // This subscription's name for its lease (one subscribe call holds a name at a time), led by this event store's.
    const me = `${this.instanceTag}/${randomUUID()}`;
    let holding = false;
    // Losing the lease: whoever waits for this process to catch up asks the stored cursor instead.
    const lose = () => {
      holding = false;
      const waiting = waiters;
      waiters = [];
      for (const w of waiting) w.resolve();
    };
    let stopped = false;
    let wake: (() => void) | undefined;
    let announced = false;
    let waiters: { target: Cursor; resolve: () => void }[] = [];
    let handled: Cursor | undefined;
    const sleep = (ms: number) =>
      new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          wake = undefined;
          resolve();
        }, ms);
        wake = () => {
          clearTimeout(t);
          wake = undefined;
          resolve();
        };
      });
    const unlisten = this.db.listen(EVENTS_CHANNEL, () => {
      this.notices++;
      announced = true;
      // a process waiting for the lease waits for the lease, not for commits
      if (holding) wake?.();
    });
    this.handled.set(name, () => (holding ? (handled ?? START) : undefined));
    // After each wanted batch: one statement on the pool (Prisma's model API cost about 0.3 ms of CPU a call here).
    // Only the holder stores: a process that lost its lease (it froze past it) writes nothing.
    const store = async (cursor: Cursor) => {
      const { rowCount } = await this.db.pool.query("UPDATE subscriptions SET tx_id = $1, position = $2, updated_at = now() WHERE name = $3 AND owner = $4", [
        cursor.tx.toString(),
        cursor.position.toString(),
        name,
        me,
      ]);
      if (!rowCount) lose();
    };
    // Until when this process may act as the holder by its own clock: the lease as granted, less a fifth, counted
    // from when the claim was sent (renewals that fail, say while the database is away, let it pass).
    let heldUntil = 0;
    /**
     * Takes the lease when it is free (expired or given up; on the embedded database, which serves one process (or
     * the workers of one start) at a time, also one an earlier process left: it was killed), or renews it (`renewing`: ours only); the stored
     * cursor when held. The database's clock decides for every process.
     */
    const claim = async (renewing: boolean): Promise<Cursor | undefined> => {
      const sentAt = performance.now();
      const earlier = !renewing && this.db.kind === "embedded";
      const free = renewing ? "owner = $2" : `(owner = $2 OR lease_until < now()${earlier ? " OR owner NOT LIKE $4" : ""})`;
      const { rows } = await this.db.pool.query<{ tx: string; position: string }>(
        `UPDATE subscriptions SET owner = $2, lease_until = now() + make_interval(secs => $3)
          WHERE name = $1 AND ${free} RETURNING tx_id::text AS tx, position::text AS position`,
        [name, me, leaseS, ...(earlier ? [`${this.instanceTag}/%`] : [])],
      );
      if (!rows[0]) return undefined;
      heldUntil = sentAt + leaseS * 800;
      return { tx: BigInt(rows[0].tx), position: BigInt(rows[0].position) };
    };
    // The holder renews its lease on a timer, so a long batch (slow targets) does not lose it.
    let renewing: Promise<unknown> = Promise.resolve();
    const renewal = setInterval(
      () => {
        if (!holding) return;
        renewing = claim(true).then(
          (got) => {
            if (!got) lose();
          },
          () => {},
        );
      },
      (leaseS * 1000) / 3,
    );
    renewal.unref();
    const loop = (async () => {
      let backoff = opts.retryMs ?? 200;
      // (the renewal timer ends with the loop, even one that failed before it began)
      // lease_until takes the database's default (its clock), not the process's
      await this.db.pool
        .query("INSERT INTO subscriptions (name, tx_id, position, updated_at) VALUES ($1, 0, 0, now()) ON CONFLICT (name) DO NOTHING", [name])
        .catch((err) => {
          clearInterval(renewal);
          throw err;
        });
      let cursor: Cursor = START;
      let stored = cursor;
      let storedAt = performance.now();
      while (!stopped) {
        try {
          if (holding && performance.now() > heldUntil) lose();
          if (!holding) {
            // Another process holds it: try again within half a lease (it may have been killed).
            const got = await claim(false);
            if (!got) {
              await sleep(Math.min(pollMs, (leaseS * 1000) / 2));
              continue;
            }
            holding = true;
            cursor = got;
            stored = got;
            handled = got;
            storedAt = performance.now();
          }
          if (announced && coalesceMs > 0) await new Promise((r) => setTimeout(r, coalesceMs));
          announced = false;
          const batch = await this.readShared(cursor, batchSize);
          if (batch.length) {
            const wanted = opts.filter ? batch.filter(opts.filter) : batch;
            if (wanted.length)
              await handle(wanted, (e) => {
                // an event of this batch, read with its transaction ID
                cursor = { tx: (e as StoredEvent & { tx: bigint }).tx, position: e.position };
              });
            const last = batch[batch.length - 1]!;
            cursor = { tx: last.tx, position: last.position };
            if (wanted.length || performance.now() - storedAt >= storeEveryMs) {
              await store(cursor);
              stored = cursor;
              storedAt = performance.now();
            }
            backoff = opts.retryMs ?? 200;
          }
          // Idle with progress not stored (only unwanted events since): stored after storeEveryMs, so that
          // another process waiting for this subscription to catch up (caughtUp) sees it.
          if (batch.length < batchSize && after(cursor, stored) && performance.now() - storedAt >= storeEveryMs) {
            await store(cursor);
            stored = cursor;
            storedAt = performance.now();
          }
          handled = cursor;
          const done = cursor;
          waiters = waiters.filter((w) => {
            if (after(w.target, done)) return true;
            w.resolve();
            return false;
          });
          if (batch.length < batchSize && !announced) await sleep(pollMs);
        } catch (err) {
          if (stopped) break;
          opts.onError?.(err);
          await sleep(backoff);
          backoff = Math.min(backoff * 2, 30_000);
        }
      }
      // What was skipped since the last store is not read again after a restart; the lease is given up at once
      // (after a renewal on its way, which would otherwise take it again).
      clearInterval(renewal);
      await renewing;
      if (holding && after(cursor, stored)) await store(cursor).catch(() => undefined);
      if (holding)
        await this.db.pool.query("UPDATE subscriptions SET owner = '', lease_until = now() WHERE name = $1 AND owner = $2", [name, me]).catch(() => undefined);
      lose();
    })();
    return {
      stop: async () => {
        stopped = true;
        wake?.();
        await loop;
        this.handled.delete(name);
        await (await unlisten)();
      },
      caughtUp: async () => {
        const target = await this.latest();
        // a stopped subscription has nothing more to catch up with
        while (!stopped) {
          if (holding) {
            if (handled && !after(target, handled)) return;
            // resolved by the loop when it has handled the target, or once a lost lease makes it wait elsewhere
            await new Promise<void>((resolve) => {
              waiters.push({ target, resolve });
              wake?.();
            });
            if (holding) return;
          }
          // Another process holds it: its stored cursor tells how far it has come.
          const row = await prisma.subscription.findUnique({ where: { name } });
          if (row && !after(target, { tx: row.txId, position: row.position })) return;
          await new Promise((r) => setTimeout(r, 100));
        }
      },
      holding: () => holding,
    };
  }
}
