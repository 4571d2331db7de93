import type { EventStore } from "../eventstore/eventstore.js";
import { executionRemoved, executionSet, targetAdded, targetChanged, targetRemoved } from "./events.js";

/** Projections of targets and executions. */
export function registerActionReducers(es: EventStore): void {
  es.on(targetAdded, async (tx, e) => {
    await tx.target.create({
      data: { id: e.aggregateId, instanceId: e.instanceId, ...e.payload, sequence: e.sequence, createdAt: e.createdAt, changeDate: e.createdAt },
    });
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
