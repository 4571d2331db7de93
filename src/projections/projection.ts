/**
 * A projection: the one module that writes a table, with a handler for every event that changes the table's
 * rows (ZITADEL's internal/query/projection). Handlers run in the transaction that appends their event
 * (`EventStore.on`), each event's handlers in the order of `allProjections` (index.ts). A handler writes its own
 * table only; where one reads another table's rows that the same event removes, index.ts orders the reader first.
 */
import type { Prisma } from "../../gen/prisma/client.js";
import type { EventDefinition } from "../eventstore/definition.js";
import type { Reducer, StoredEvent } from "../eventstore/eventstore.js";

/** A table, named as Prisma's delegates name it (`tx.user`, `tx.machineKey`). */
export type TableName = Uncapitalize<Prisma.ModelName>;

export interface Handler {
  readonly event: EventDefinition<object>;
  readonly reduce: Reducer;
}

export interface Projection<T extends TableName = TableName> {
  readonly table: T;
  /** Of the handlers' output: a change to what they write for the same events asks for the table to be rebuilt. */
  readonly version: number;
  readonly handlers: readonly Handler[];
}

/** Registers a handler: the reducer sees the payload typed by the event's definition. */
export type On = <P extends object>(event: EventDefinition<P>, reduce: Reducer<P>) => void;

/** The handlers `register` declares, in its order. */
export function collectHandlers(register: (on: On) => void): Handler[] {
  const handlers: Handler[] = [];
  // Widened for the list of all events: `EventStore.push` hands a handler only events of its definition's type.
  register((event, reduce) => void handlers.push({ event: event as unknown as EventDefinition<object>, reduce: reduce as Reducer }));
  return handlers;
}

/**
 * `table`'s projection. Its own aggregate's events come first: `tableSources` (query/sources.ts) takes the
 * aggregate types in the order of the handlers, the first being the one whose ID names a row (`readRow`).
 */
export function defineProjection<T extends TableName>(table: T, version: number, register: (on: On) => void): Projection<T> {
  const handlers = collectHandlers(register);
  const types = new Set(handlers.map((h) => h.event.type));
  if (types.size !== handlers.length) throw new Error(`the ${table} projection handles an event twice`);
  return { table, version, handlers };
}

/** A credential row (a user's or an application's key, a PAT), from its event. */
export function credentialRow(e: StoredEvent<{ expiresAt: string | null }>, id: string) {
  return { id, instanceId: e.instanceId, expiresAt: e.payload.expiresAt ? new Date(e.payload.expiresAt) : null, createdAt: e.createdAt };
}
