import type { EventStore } from "../eventstore/eventstore.js";
import { executionRemoved, executionSet, targetAdded, targetChanged, targetRemoved } from "./events.js";

/** Projections of targets and executions. */
export function registerActionReducers(es: EventStore): void {
  // Creating targets is a hot path (measured in bench/writes.ts): one statement without Prisma.
  es.on(targetAdded, async (_tx, e, sql) => {
    const t = e.payload;
    await sql.query(
      `INSERT INTO targets (id, instance_id, name, target_type, url, timeout_ms, is_async, interrupt_on_error, signing_key, sequence, created_at, change_date)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)`,
      [e.aggregateId, e.instanceId, t.name, t.targetType, t.url, t.timeoutMs, t.isAsync, t.interruptOnError, t.signingKey, e.sequence, e.createdAt],
    );
  });
  es.on(targetChanged, async (tx, e) => {
    await tx.target.update({ where: { id: e.aggregateId }, data: { ...e.payload, sequence: e.sequence, changeDate: e.createdAt } });
  });
  es.on(targetRemoved, async (tx, e) => {
    await tx.target.delete({ where: { id: e.aggregateId } });
  });
  es.on(executionSet, async (tx, e) => {
    const p = e.payload;
    const key = { instanceId_id: { instanceId: e.instanceId, id: e.aggregateId } };
    const data = { targets: p.targets, includes: p.includes, sequence: e.sequence, changeDate: e.createdAt };
    await tx.execution.upsert({
      where: key,
      create: { instanceId: e.instanceId, id: e.aggregateId, conditionType: p.conditionType, createdAt: e.createdAt, ...data },
      update: data,
    });
  });
  es.on(executionRemoved, async (tx, e) => {
    await tx.execution.delete({ where: { instanceId_id: { instanceId: e.instanceId, id: e.aggregateId } } });
  });
}
