import type { NewEvent, StoredEvent } from "./eventstore.js";

/** The payload of an event that carries nothing: it is stored as `{}`. */
export type NoPayload = Record<string, never>;

/** Where an event is appended: the aggregate and the context that owns it. */
export interface AggregateRef {
  aggregateId: string;
  resourceOwner: string;
}

/**
 * An event not yet bound to its aggregate: what a decision about an already loaded aggregate returns. The
 * aggregate type is a literal type, so `changeAggregate` accepts only events of the aggregate it loaded.
 */
export type EventChange<P extends object = object, A extends string = string> = Omit<NewEvent<P>, keyof AggregateRef | "aggregateType"> & { aggregateType: A };

// A payload whose fields are all optional may be left out, e.g. `userLocked.event(ref)`.
type PayloadArgs<P extends object> = NoPayload extends P ? [payload?: P] : [payload: P];

/**
 * One event type: its name, the type of aggregate it belongs to and its payload's type, stated once. The
 * command that appends it builds it here, and the reducer registered with it (`EventStore.on`) reads the
 * same payload type, so a field renamed on one side no longer compiles on the other.
 */
export interface EventDefinition<P extends object, A extends string = string> {
  /** Dotted `<aggregate>.<noun>.<verb>`, e.g. `settings.language.set`. */
  readonly type: string;
  readonly aggregateType: A;
  change(...payload: PayloadArgs<P>): EventChange<P, A>;
  event(aggregate: AggregateRef, ...payload: PayloadArgs<P>): NewEvent<P>;
}

export type PayloadOf<D> = D extends EventDefinition<infer P> ? P : never;

/**
 * An aggregate type, to define its events with: `user.defineEvent<Payload>("user.human.added")` (no payload
 * type: the event carries none). Payloads are stored as JSON, so payload types hold JSON values only: times
 * are ISO strings, absent values are left out or null.
 */
export function aggregateType<A extends string>(name: A) {
  return {
    defineEvent<P extends object = NoPayload>(type: string): EventDefinition<P, A> {
      // `PayloadArgs` lets the payload be left out only when `{}` is a valid one.
      const change = (...args: PayloadArgs<P>): EventChange<P, A> => ({ aggregateType: name, type, payload: (args[0] ?? {}) as P });
      return { type, aggregateType: name, change, event: (aggregate, ...args) => ({ ...aggregate, ...change(...args) }) };
    },
  };
}

/**
 * Whether an event read from the log is one of `definition`'s, its payload then typed by that definition: what
 * `EventStore.on` does for reducers, for the log's other readers (subscribers). It holds for the same reason:
 * events of a defined type are appended only through their definition.
 */
export function isEventOf<P extends object>(definition: EventDefinition<P>, e: StoredEvent): e is StoredEvent & StoredEvent<P> {
  return e.type === definition.type;
}
