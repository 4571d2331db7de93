import type { EventChange } from "../eventstore/definition.js";
import { isUniqueViolation } from "../errors/errors.js";
import type { EventStore, EventWriter } from "../eventstore/eventstore.js";

/** What a manipulation returns: the resource's ID and the sequence and date of its newest event. */
export interface ChangeDetails {
  id: string;
  sequence: number;
  changeDate: Date;
  instanceId: string;
  /** The organisation (or instance) that owns the resource. */
  resourceOwner: string;
}

interface Versioned {
  id: string;
  instanceId: string;
  sequence: number;
  changeDate: Date;
}

/** What `decide` returns: events of the aggregate type `A` only (checked at compile time). */
export type Decision<R, A extends string> = (row: R, w: EventWriter) => EventChange<object, A>[] | Promise<EventChange<object, A>[]>;

/**
 * The shape of every change to an existing aggregate: lock it, load its projection fresh (NOT_FOUND when it
 * is gone), let `decide` choose the events, append them. No events means nothing changed: the current
 * details come back and nothing is written (patches succeed without a change).
 */
export async function changeAggregate<R extends Versioned, A extends string>(
  es: EventStore,
  a: {
    aggregateType: A;
    instanceId: string;
    id: string;
    creator: string;
    load: (w: EventWriter) => Promise<R | null>;
    notFound: () => Error;
    ownerOf: (row: R) => string;
    decide: Decision<R, NoInfer<A>>;
  },
): Promise<ChangeDetails> {
  const { result } = await es.execute(async (w): Promise<ChangeDetails> => {
    await w.lock(a.instanceId, a.aggregateType, a.id);
    const row = await a.load(w);
    if (!row || row.instanceId !== a.instanceId) throw a.notFound();
    const resourceOwner = a.ownerOf(row);
    const changes = await a.decide(row, w);
    if (!changes.length) return { id: row.id, sequence: row.sequence, changeDate: row.changeDate, instanceId: a.instanceId, resourceOwner };
    const stored = await w.push(
      a.instanceId,
      a.creator,
      changes.map((c) => ({ ...c, aggregateId: a.id, resourceOwner })),
    );
    const last = stored[stored.length - 1]!;
    return { id: a.id, sequence: last.sequence, changeDate: last.createdAt, instanceId: a.instanceId, resourceOwner };
  });
  return result;
}

/**
 * Runs a command, turning a unique-index hit by a concurrent writer into the same ALREADY_EXISTS a check gives.
 * `table`: the model's table, for a hit by a statement sent without Prisma (a projection's own SQL).
 */
export async function withUniqueConflict<T>(model: string, conflict: () => Error, run: () => Promise<T>, table?: string): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (isUniqueViolation(e, model) || (table !== undefined && isUniqueViolation(e, model, table))) throw conflict();
    throw e;
  }
}

/** Only the given fields whose values differ from the row's (lists and objects compared by their JSON). */
export function changedFields<T extends object>(row: object, wanted: T): Partial<T> {
  const current = new Map(Object.entries(row));
  const same = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);
  // Only keys of `wanted` are kept, so the result is a part of it.
  return Object.fromEntries(Object.entries(wanted).filter(([k, v]) => v !== undefined && !same(current.get(k), v))) as Partial<T>;
}
