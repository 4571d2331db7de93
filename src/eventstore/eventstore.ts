import { errors, isUniqueViolation } from "../errors/errors.js";
import type { Prisma as PrismaNamespace } from "../../gen/prisma/client.js";
import type { Database } from "../storage/database.js";
import type { EventDefinition } from "./definition.js";

export type Tx = PrismaNamespace.TransactionClient;

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
 * An appended event. Read back from the log (subscriptions, `eventsAfter`) its payload is plain JSON of any
 * shape; a reducer registered with an event's definition sees the payload typed by that definition.
 */
export interface StoredEvent<P extends object = Record<string, unknown>> extends NewEvent<P> {
  instanceId: string;
  position: bigint;
  sequence: number;
  creator: string;
  createdAt: Date;
}

/** Updates a projection from one event, inside the transaction that appends it. */
export type Reducer<P extends object = object> = (tx: Tx, event: StoredEvent<P>) => Promise<void>;

export const EVENTS_CHANNEL = "svc_events";

/** PostgreSQL broke a lock cycle by failing this transaction (40P01): run the command again. */
function isDeadlock(err: unknown): boolean {
  const e = err as { code?: string; message?: string; meta?: unknown } | undefined;
  return e?.code === "P2034" || /deadlock detected|40P01/.test(`${e?.message ?? ""} ${JSON.stringify(e?.meta ?? "")}`);
}

// Held from the first append until commit: positions then become visible strictly in order, so a
// subscriber that has read up to position P never later finds an event below P.
const APPEND_LOCK = 7_311_002;
const MAX_ATTEMPTS = 8;

/** What a command sees inside its transaction. */
export class EventWriter {
  private readonly expected = new Map<string, number>();
  private locked = false;
  readonly pushed: StoredEvent[] = [];

  constructor(
    readonly tx: Tx,
    private readonly reducers: Map<string, Reducer[]>,
  ) {}

  private static key(instanceId: string, type: string, id: string) {
    return `${instanceId}\u0000${type}\u0000${id}`;
  }

  /**
   * The aggregate's current sequence (0 when it has no events), read under a transaction-scoped lock of
   * the aggregate: a concurrent command on the same aggregate waits here and then decides on fresh state.
   * Commands read before they decide, so decisions are never made on stale state. The unique key on
   * (aggregate, sequence) stays as the backstop: an append that still conflicts reruns the command.
   */
  async sequenceOf(instanceId: string, aggregateType: string, aggregateId: string): Promise<number> {
    const key = EventWriter.key(instanceId, aggregateType, aggregateId);
    const known = this.expected.get(key);
    if (known !== undefined) return known;
    const lockKey = `${instanceId}|${aggregateType}|${aggregateId}`;
    await this.tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${lockKey}, 0))`;
    const agg = await this.tx.event.aggregate({
      where: { instanceId, aggregateType, aggregateId },
      _max: { sequence: true },
    });
    const seq = agg._max.sequence ?? 0;
    this.expected.set(key, seq);
    return seq;
  }

  async push(instanceId: string, creator: string, events: NewEvent[]): Promise<StoredEvent[]> {
    // Aggregate locks before the append lock, always in this order, so two commands cannot wait on each other.
    for (const e of events) await this.sequenceOf(instanceId, e.aggregateType, e.aggregateId);
    if (!this.locked) {
      await this.tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(${APPEND_LOCK})`);
      this.locked = true;
    }
    const out: StoredEvent[] = [];
    for (const e of events) {
      const seq = (await this.sequenceOf(instanceId, e.aggregateType, e.aggregateId)) + 1;
      const row = await this.tx.event.create({
        data: {
          instanceId,
          aggregateType: e.aggregateType,
          aggregateId: e.aggregateId,
          sequence: seq,
          type: e.type,
          payload: e.payload,
          creator,
          resourceOwner: e.resourceOwner,
        },
      });
      this.expected.set(EventWriter.key(instanceId, e.aggregateType, e.aggregateId), seq);
      const stored = toStored(row);
      for (const reduce of this.reducers.get(e.type) ?? []) await reduce(this.tx, stored);
      out.push(stored);
    }
    this.pushed.push(...out);
    return out;
  }
}

type EventRow = Awaited<ReturnType<Tx["event"]["create"]>>;

/** Every writer appends an object; anything else (never written) reads as an empty payload. */
function payloadOf(json: PrismaNamespace.JsonValue): Record<string, unknown> {
  return json !== null && typeof json === "object" && !Array.isArray(json) ? json : {};
}

function toStored(row: EventRow): StoredEvent {
  return {
    position: row.position,
    instanceId: row.instanceId,
    aggregateType: row.aggregateType,
    aggregateId: row.aggregateId,
    sequence: row.sequence,
    type: row.type,
    payload: payloadOf(row.payload),
    creator: row.creator,
    resourceOwner: row.resourceOwner,
    createdAt: row.createdAt,
  };
}

export interface SubscribeOptions {
  /** Events per batch (default 100). */
  batchSize?: number;
  /** Poll interval when no notification arrives (default 1000 ms). */
  pollMs?: number;
  /** Delay after a failed batch, doubled up to 30 s (default 200 ms). */
  retryMs?: number;
  /** Only these events are handed over (the position still moves past the others). */
  filter?: (e: StoredEvent) => boolean;
  onError?: (err: unknown) => void;
}

export interface Subscription {
  stop(): Promise<void>;
  /** Resolves once everything appended before this call has been handled. */
  caughtUp(): Promise<void>;
}

/** Append-only events with per-aggregate sequences, a global position, projections and durable subscriptions. */
export class EventStore {
  private readonly reducers = new Map<string, Reducer[]>();
  private readonly committed: ((events: StoredEvent[]) => void)[] = [];
  /** Counters for tests and metrics: commands retried after a conflict, and rejected after too many. */
  readonly stats = { retried: 0, rejected: 0 };

  constructor(private readonly db: Database) {}

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

  /** Called right after a transaction that appended events commits (caches of this process clear here). */
  onCommitted(fn: (events: StoredEvent[]) => void): void {
    this.committed.push(fn);
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
      try {
        const out = await this.db.prisma.$transaction(
          async (tx) => {
            const writer = new EventWriter(tx, this.reducers);
            const result = await command(writer);
            return { result, events: writer.pushed };
          },
          { maxWait: 10_000, timeout: 30_000 },
        );
        if (out.events.length) {
          for (const fn of this.committed) fn(out.events);
          await this.db.notify(EVENTS_CHANNEL).catch(() => {});
        }
        return out;
      } catch (err) {
        if (!isUniqueViolation(err, "Event") && !isDeadlock(err)) throw err;
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

  async eventsAfter(position: bigint, limit: number): Promise<StoredEvent[]> {
    const rows = await this.db.prisma.event.findMany({ where: { position: { gt: position } }, orderBy: { position: "asc" }, take: limit });
    return rows.map(toStored);
  }

  /** The event at a position: a delivery retried later reads its event again. */
  async eventAt(position: bigint): Promise<StoredEvent | undefined> {
    const row = await this.db.prisma.event.findUnique({ where: { position } });
    return row ? toStored(row) : undefined;
  }

  async latestPosition(): Promise<bigint> {
    const agg = await this.db.prisma.event.aggregate({ _max: { position: true } });
    return agg._max.position ?? 0n;
  }

  /**
   * Hands every event after the subscription's stored position to `handle`, in order, at least once: the
   * position moves only after `handle` resolves, and it is stored, so a restart resumes where it stopped.
   * A failing batch is retried with backoff.
   */
  subscribe(name: string, handle: (events: StoredEvent[]) => Promise<void>, opts: SubscribeOptions = {}): Subscription {
    const batchSize = opts.batchSize ?? 100;
    const pollMs = opts.pollMs ?? 1000;
    const prisma = this.db.prisma;
    let stopped = false;
    let wake: (() => void) | undefined;
    let waiters: { target: bigint; resolve: () => void }[] = [];
    let handled = -1n;
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
    const unlisten = this.db.listen(EVENTS_CHANNEL, () => wake?.());
    const loop = (async () => {
      let backoff = opts.retryMs ?? 200;
      const row = await prisma.subscription.upsert({ where: { name }, create: { name, position: 0n }, update: {} });
      let position = row.position;
      while (!stopped) {
        try {
          const batch = await this.eventsAfter(position, batchSize);
          if (batch.length) {
            const wanted = opts.filter ? batch.filter(opts.filter) : batch;
            if (wanted.length) await handle(wanted);
            position = batch[batch.length - 1]!.position;
            await prisma.subscription.update({ where: { name }, data: { position } });
            backoff = opts.retryMs ?? 200;
          }
          handled = position;
          waiters = waiters.filter((w) => {
            if (w.target <= handled) {
              w.resolve();
              return false;
            }
            return true;
          });
          if (batch.length < batchSize) await sleep(pollMs);
        } catch (err) {
          if (stopped) break;
          opts.onError?.(err);
          await sleep(backoff);
          backoff = Math.min(backoff * 2, 30_000);
        }
      }
    })();
    return {
      stop: async () => {
        stopped = true;
        wake?.();
        await loop;
        await (await unlisten)();
      },
      caughtUp: async () => {
        const target = await this.latestPosition();
        if (handled >= target) return;
        await new Promise<void>((resolve) => {
          waiters.push({ target, resolve });
          wake?.();
        });
      },
    };
  }
}
