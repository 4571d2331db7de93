import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";

/** Execution targets (the signing key sealed). */
export const targets = defineProjection("target", 1, (on) => {
  // Creating targets is a hot path (measured in bench/writes.ts): one statement without Prisma.
  on(events.targetAdded, async (_tx, e, sql) => {
    const t = e.payload;
    await sql.query(
      `INSERT INTO targets (id, instance_id, name, target_type, url, timeout_ms, is_async, interrupt_on_error, signing_key, sequence, created_at, change_date)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)`,
      [e.aggregateId, e.instanceId, t.name, t.targetType, t.url, t.timeoutMs, t.isAsync, t.interruptOnError, t.signingKey, e.sequence, e.createdAt],
    );
  });
  on(events.targetChanged, async (tx, e) => {
    await tx.target.update({ where: { id: e.aggregateId }, data: { ...e.payload, sequence: e.sequence, changeDate: e.createdAt } });
  });
  on(events.targetRemoved, async (tx, e) => {
    await tx.target.delete({ where: { id: e.aggregateId } });
  });
});
