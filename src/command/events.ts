import * as definitions from "./event-types.js";
import type { ContextType } from "./event-types.js";

// Commands and reducers import the definitions from here.
export * from "./event-types.js";

/** Every event the server writes: each export of event-types.ts, so nothing is listed twice. */
export const allEventDefinitions = Object.values(definitions);

/** Every event type, sorted: event executions are checked against it, and docs/events.md must list it. */
export const allEventTypes: string[] = allEventDefinitions.map((d) => d.type).sort();

// Two definitions of one type would let their payload types disagree about the same stored events.
const duplicate = allEventTypes.find((t, i) => t === allEventTypes[i - 1]);
if (duplicate) throw new Error(`event type ${duplicate} is defined twice`);

/** Aggregate IDs of settings: one aggregate per kind and owning context. */
export function settingsAggregateId(kind: string, ownerType: ContextType, ownerId: string): string {
  return `${kind}/${ownerType}/${ownerId}`;
}
