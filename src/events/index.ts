/**
 * The events: commands append them, projections (src/projections/) reduce them, the log's readers read them.
 * Each is defined once in definitions.ts; everything else imports them from here.
 */
import { type SettingsKind, settingsKindNames, settingsKinds } from "../domain/settings-kinds.js";
import type { EventDefinition } from "../eventstore/definition.js";
import * as definitions from "./definitions.js";
import type { ContextType, MemberRemoved, MemberRoles, SettingsSet } from "./definitions.js";

export * from "./definitions.js";

/** Every event the server writes: each export of definitions.ts, so nothing is listed twice. */
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

type SettingsEvent = EventDefinition<SettingsSet, "settings">;

/**
 * The event definition of each kind of settings: the one definitions.ts defines under the type the registry
 * names. Every `settings` event carries the SettingsSet payload, so the aggregate type is what is checked; a
 * registry entry without its definition stops the server at start.
 */
export const settingsEvents = Object.fromEntries(
  settingsKindNames.map((kind) => {
    const def = allEventDefinitions.find((d) => d.type === settingsKinds[kind].event);
    if (def?.aggregateType !== "settings")
      throw new Error(`the ${kind} settings' event ${settingsKinds[kind].event} is not defined in src/events/definitions.ts`);
    return [kind, def as unknown as SettingsEvent];
  }),
) as Record<SettingsKind, SettingsEvent>;

/** The contexts users are members of. */
export type MemberContextType = ContextType | "project" | "project_grant";

export interface MemberEvents {
  added: EventDefinition<MemberRoles>;
  changed: EventDefinition<MemberRoles>;
  removed: EventDefinition<MemberRemoved>;
}

/** The member events of each context type: they belong to the context's aggregate. */
export const memberEvents: Record<MemberContextType, MemberEvents> = {
  system: { added: definitions.systemMemberAdded, changed: definitions.systemMemberChanged, removed: definitions.systemMemberRemoved },
  instance: { added: definitions.instanceMemberAdded, changed: definitions.instanceMemberChanged, removed: definitions.instanceMemberRemoved },
  org: { added: definitions.orgMemberAdded, changed: definitions.orgMemberChanged, removed: definitions.orgMemberRemoved },
  project: { added: definitions.projectMemberAdded, changed: definitions.projectMemberChanged, removed: definitions.projectMemberRemoved },
  project_grant: {
    added: definitions.projectGrantMemberAdded,
    changed: definitions.projectGrantMemberChanged,
    removed: definitions.projectGrantMemberRemoved,
  },
};
