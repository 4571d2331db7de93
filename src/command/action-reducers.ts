import type { EventStore } from "../eventstore/eventstore.js";
import { EventTypes } from "./events.js";

type TargetFields = {
  name: string;
  targetType: string;
  url: string;
  timeoutMs: number;
  isAsync: boolean;
  interruptOnError: boolean;
  signingKey: string;
};

/** Projections of targets and executions. */
export function registerActionReducers(es: EventStore): void {
  es.on(EventTypes.targetAdded, async (tx, e) => {
    const p = e.payload as TargetFields;
    await tx.target.create({
      data: { id: e.aggregateId, instanceId: e.instanceId, ...p, sequence: e.sequence, createdAt: e.createdAt, changeDate: e.createdAt },
    });
  });
  es.on(EventTypes.targetChanged, async (tx, e) => {
    await tx.target.update({ where: { id: e.aggregateId }, data: { ...(e.payload as Partial<TargetFields>), sequence: e.sequence, changeDate: e.createdAt } });
  });
  es.on(EventTypes.targetRemoved, async (tx, e) => {
    await tx.target.delete({ where: { id: e.aggregateId } });
  });
  es.on(EventTypes.executionSet, async (tx, e) => {
    const p = e.payload as { conditionType: string; targets: string[]; includes: string[] };
    const key = { instanceId_id: { instanceId: e.instanceId, id: e.aggregateId } };
    const data = { targets: p.targets, includes: p.includes, sequence: e.sequence, changeDate: e.createdAt };
    await tx.execution.upsert({
      where: key,
      create: { instanceId: e.instanceId, id: e.aggregateId, conditionType: p.conditionType, createdAt: e.createdAt, ...data },
      update: data,
    });
  });
  es.on(EventTypes.executionRemoved, async (tx, e) => {
    await tx.execution.delete({ where: { instanceId_id: { instanceId: e.instanceId, id: e.aggregateId } } });
  });
}
