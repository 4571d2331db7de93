import type { ContextOwner } from "../domain/contexts.js";
import { applyChange, effectiveChange, type SettingsChange, type StoredValues } from "../domain/settings.js";
import type { SettingsKind } from "../domain/settings-kinds.js";
import type { EventStore, NewEvent, StoredEvent } from "../eventstore/eventstore.js";
import { Batches } from "./batches.js";
import { settingsAggregateId, settingsEvents } from "../events/index.js";

export interface SettingsDetails {
  sequence: number;
  changeDate: Date | undefined;
  owner: ContextOwner;
}

interface SettingsWrite {
  kind: SettingsKind;
  instanceId: string;
  owner: ContextOwner;
  creator: string;
  change: SettingsChange;
}

/**
 * Sets and resets properties of a kind of settings in one context. Only what really changes is written:
 * a request that changes nothing succeeds and appends no event.
 *
 * Settings are written to one aggregate per context and kind, so concurrent writes queue on its lock;
 * those that arrive while one is being written go together into the next transaction (group commit,
 * `Batches`), each deciding on the values the previous ones left and appending its own event.
 */
export function changeSettings(es: EventStore, args: SettingsWrite): Promise<SettingsDetails> {
  // System-wide settings live outside any instance.
  const instanceId = args.owner.type === "system" ? "" : args.instanceId;
  const aggregateId = settingsAggregateId(args.kind, args.owner.type, args.owner.id);
  return batchesOf(es).add(`${instanceId}|${aggregateId}`, { ...args, instanceId });
}

const batches = new WeakMap<EventStore, Batches<SettingsWrite, SettingsDetails>>();

function batchesOf(es: EventStore): Batches<SettingsWrite, SettingsDetails> {
  let b = batches.get(es);
  if (!b) {
    b = new Batches((_, writes) => writeSettings(es, writes));
    batches.set(es, b);
  }
  return b;
}

/** Writes of one settings aggregate in one transaction, in arrival order. */
async function writeSettings(es: EventStore, writes: SettingsWrite[]): Promise<SettingsDetails[]> {
  const { kind, owner, instanceId } = writes[0]!;
  const aggregateId = settingsAggregateId(kind, owner.type, owner.id);
  const { result } = await es.execute(async (w) => {
    await w.lock(instanceId, "settings", aggregateId);
    // The lock is held until commit: these statements go without Prisma's per-statement cost (bench/writes.ts).
    const { rows } = await w.sql.query<{ values: StoredValues; sequence: number; changeDate: Date }>(
      `SELECT values, sequence, change_date AS "changeDate" FROM settings WHERE kind = $1 AND owner_type = $2 AND owner_id = $3`,
      [kind, owner.type, owner.id],
    );
    // Each write decides on the values the previous ones left; the events go in one append per run of
    // writes by the same caller (an append names one creator).
    let values = rows[0]?.values ?? {};
    const planned: { creator: string; event: NewEvent; write: number }[] = [];
    writes.forEach((write, i) => {
      const change = effectiveChange(values, write.change);
      if (!change) return;
      planned.push({
        creator: write.creator,
        write: i,
        event: settingsEvents[kind].event({ aggregateId, resourceOwner: owner.id }, { ownerType: owner.type, ownerId: owner.id, ...change }),
      });
      values = applyChange(values, change);
    });
    const stored: StoredEvent[] = [];
    for (let start = 0; start < planned.length; ) {
      let end = start + 1;
      while (end < planned.length && planned[end]!.creator === planned[start]!.creator) end++;
      const run = planned.slice(start, end);
      stored.push(
        ...(await w.push(
          instanceId,
          run[0]!.creator,
          run.map((p) => p.event),
        )),
      );
      start = end;
    }
    // A write that changed nothing answers with what the writes before it left.
    let details: SettingsDetails = { sequence: rows[0]?.sequence ?? 0, changeDate: rows[0]?.changeDate, owner };
    const out: SettingsDetails[] = [];
    let next = 0;
    writes.forEach((_, i) => {
      if (planned[next]?.write === i) {
        const e = stored[next++]!;
        details = { sequence: e.sequence, changeDate: e.createdAt, owner };
      }
      out.push(details);
    });
    return out;
  });
  return result;
}
