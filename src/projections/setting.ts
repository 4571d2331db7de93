import { settingsKindNames } from "../domain/settings-kinds.js";
import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";

/** One row per kind and owning context: what that context itself set. */
export const settings = defineProjection("setting", 1, (on) => {
  for (const kind of settingsKindNames) {
    // `applyChange` in one statement: the stored values merged with `set` (a top-level merge, as jsonb's ||
    // does), minus the `reset` keys. A hot path (bench/writes.ts): without Prisma.
    on(events.settingsEvents[kind], async (_tx, e, sql) => {
      const { ownerType, ownerId, set, reset } = e.payload;
      await sql.query(
        `INSERT INTO settings (kind, owner_type, owner_id, instance_id, values, sequence, change_date)
         VALUES ($1, $2, $3, $4, $5::jsonb - $6::text[], $7, $8)
         ON CONFLICT (kind, owner_type, owner_id)
         DO UPDATE SET values = (settings.values || $5::jsonb) - $6::text[], sequence = excluded.sequence, change_date = excluded.change_date`,
        [kind, ownerType, ownerId, e.instanceId, JSON.stringify(set ?? {}), reset ?? [], e.sequence, e.createdAt],
      );
    });
  }
});
