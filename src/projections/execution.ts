import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";

/** Executions: the targets called on a condition. */
export const executions = defineProjection("execution", 1, (on) => {
  on(events.executionSet, async (tx, e) => {
    const p = e.payload;
    const key = { instanceId_id: { instanceId: e.instanceId, id: e.aggregateId } };
    const data = { targets: p.targets, includes: p.includes, sequence: e.sequence, changeDate: e.createdAt };
    await tx.execution.upsert({
      where: key,
      create: { instanceId: e.instanceId, id: e.aggregateId, conditionType: p.conditionType, createdAt: e.createdAt, ...data },
      update: data,
    });
  });
  on(events.executionRemoved, async (tx, e) => {
    await tx.execution.delete({ where: { instanceId_id: { instanceId: e.instanceId, id: e.aggregateId } } });
  });
});
