import type { ContextOwner } from "../domain/contexts.js";
import { applyChange, effectiveChange, type SettingsChange, type StoredValues } from "../domain/settings.js";
import { settingsKindNames, settingsKinds, type SettingsKind } from "../domain/settings-kinds.js";
import type { EventDefinition } from "../eventstore/definition.js";
import type { EventStore } from "../eventstore/eventstore.js";
import type { Prisma } from "../../gen/prisma/client.js";
import { allEventDefinitions, settingsAggregateId, type SettingsSet } from "./events.js";

export interface SettingsDetails {
  sequence: number;
  changeDate: Date | undefined;
  owner: ContextOwner;
}

type SettingsEvent = EventDefinition<SettingsSet, "settings">;

/**
 * The event definition of each kind: the one event-types.ts defines under the type the registry names. Every
 * `settings` event carries the SettingsSet payload, so the aggregate type is what is checked; a registry entry
 * without its definition stops the server at start.
 */
const settingsEvents = Object.fromEntries(
  settingsKindNames.map((kind) => {
    const def = allEventDefinitions.find((d) => d.type === settingsKinds[kind].event);
    if (def?.aggregateType !== "settings") throw new Error(`the ${kind} settings' event ${settingsKinds[kind].event} is not defined in event-types.ts`);
    return [kind, def as unknown as SettingsEvent];
  }),
) as Record<SettingsKind, SettingsEvent>;

/**
 * Sets and resets properties of a kind of settings in one context. Only what really changes is written:
 * a request that changes nothing succeeds and appends no event.
 */
export async function changeSettings(
  es: EventStore,
  args: { kind: SettingsKind; instanceId: string; owner: ContextOwner; creator: string; change: SettingsChange },
): Promise<SettingsDetails> {
  const { kind, owner } = args;
  // System-wide settings live outside any instance.
  const instanceId = owner.type === "system" ? "" : args.instanceId;
  const aggregateId = settingsAggregateId(kind, owner.type, owner.id);
  const { result } = await es.execute(async (w) => {
    await w.lock(instanceId, "settings", aggregateId);
    const row = await w.tx.setting.findUnique({ where: { kind_ownerType_ownerId: { kind, ownerType: owner.type, ownerId: owner.id } } });
    const change = effectiveChange((row?.values ?? {}) as StoredValues, args.change);
    if (!change) return { sequence: row?.sequence ?? 0, changeDate: row?.changeDate, owner };
    const [e] = await w.push(instanceId, args.creator, [
      settingsEvents[kind].event({ aggregateId, resourceOwner: owner.id }, { ownerType: owner.type, ownerId: owner.id, ...change }),
    ]);
    return { sequence: e!.sequence, changeDate: e!.createdAt, owner };
  });
  return result;
}

/** One projection row per kind and owning context: what that context itself set. */
export function registerSettingsReducers(es: EventStore): void {
  for (const kind of settingsKindNames) {
    es.on(settingsEvents[kind], async (tx, e) => {
      const { ownerType, ownerId, set, reset } = e.payload;
      const key = { kind_ownerType_ownerId: { kind, ownerType, ownerId } };
      const current = await tx.setting.findUnique({ where: key });
      const values = applyChange((current?.values ?? {}) as StoredValues, { set, reset }) as Prisma.InputJsonValue;
      const data = { values, sequence: e.sequence, changeDate: e.createdAt };
      await tx.setting.upsert({ where: key, create: { kind, ownerType, ownerId, instanceId: e.instanceId, ...data }, update: data });
    });
  }
}
