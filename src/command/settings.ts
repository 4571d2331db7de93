import type { EventStore } from "../eventstore/eventstore.js";
import type { SettingsOwner } from "../query/settings.js";
import { featureSet, languageSet, lockoutSet, loginSettingsSet, passwordComplexitySet, settingsAggregateId } from "./events.js";

export interface SettingsChange {
  /** Properties to set in the context. */
  set: Record<string, unknown>;
  /** Properties to reset: they fall back to the parent context's value. */
  reset: string[];
}

export interface SettingsDetails {
  sequence: number;
  changeDate: Date | undefined;
  owner: SettingsOwner;
}

/** The event of each kind of settings; the reducers register one projection per entry. */
export const settingsEvents = {
  feature: featureSet,
  language: languageSet,
  password_complexity: passwordComplexitySet,
  lockout: lockoutSet,
  login: loginSettingsSet,
} as const;
export type SettingsKind = keyof typeof settingsEvents;

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Sets and resets properties of a kind of settings in one context. Only what really changes is written:
 * a request that changes nothing succeeds and appends no event.
 */
export async function changeSettings(
  es: EventStore,
  args: { kind: SettingsKind; instanceId: string; owner: SettingsOwner; creator: string; change: SettingsChange },
): Promise<SettingsDetails> {
  const { kind, owner } = args;
  // System-wide settings live outside any instance.
  const instanceId = owner.type === "system" ? "" : args.instanceId;
  const aggregateId = settingsAggregateId(kind, owner.type, owner.id);
  const { result } = await es.execute(async (w) => {
    await w.sequenceOf(instanceId, "settings", aggregateId);
    const row = await w.tx.setting.findUnique({ where: { kind_ownerType_ownerId: { kind, ownerType: owner.type, ownerId: owner.id } } });
    const current = (row?.values ?? {}) as Record<string, unknown>;
    const set = Object.fromEntries(Object.entries(args.change.set).filter(([k, v]) => !(k in current) || !same(current[k], v)));
    const reset = args.change.reset.filter((k) => k in current && !(k in args.change.set));
    if (!Object.keys(set).length && !reset.length) {
      return { sequence: row?.sequence ?? 0, changeDate: row?.changeDate, owner };
    }
    const [e] = await w.push(instanceId, args.creator, [
      settingsEvents[kind].event({ aggregateId, resourceOwner: owner.id }, { ownerType: owner.type, ownerId: owner.id, set, reset }),
    ]);
    return { sequence: e!.sequence, changeDate: e!.createdAt, owner };
  });
  return result;
}
