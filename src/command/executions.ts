import type { ConditionType } from "../domain/conditions.js";
import { conditionTypeOfId } from "../domain/conditions.js";
import { errors } from "../errors/errors.js";
import type { EventStore, EventWriter } from "../eventstore/eventstore.js";
import { executionRemoved, executionSet } from "../events/index.js";
import { detachFromExecutions, type ResourceDetails } from "./targets.js";

/** Rejects an include that would make `id` reach itself. */
async function checkNoCycle(w: EventWriter, instanceId: string, id: string, includes: string[]) {
  const seen = new Set<string>();
  const stack = [...includes];
  while (stack.length) {
    const next = stack.pop()!;
    if (next === id) throw errors.invalidArgument("EXEC-cyc1", `invalid execution.includes: including "${includes.join('", "')}" makes "${id}" include itself`);
    if (seen.has(next)) continue;
    seen.add(next);
    const x = await w.tx.execution.findUnique({ where: { instanceId_id: { instanceId, id: next } }, select: { includes: true } });
    stack.push(...(x?.includes ?? []));
  }
}

/** Creates the execution of a condition, or replaces its targets and includes. */
export async function putExecution(
  es: EventStore,
  args: { instanceId: string; creator: string; id: string; type: ConditionType; targets: string[]; includes: string[] },
): Promise<{ details: ResourceDetails; created: boolean }> {
  const { instanceId, id } = args;
  if (!args.targets.length && !args.includes.length) {
    throw errors.invalidArgument("EXEC-3mty", "invalid execution: at least one target or include is required");
  }
  const { result } = await es.execute(async (w) => {
    await w.lock(instanceId, "execution", id);
    const found = await w.tx.target.findMany({ where: { instanceId, id: { in: args.targets } }, select: { id: true } });
    const missing = args.targets.filter((t) => !found.some((f) => f.id === t));
    if (missing.length) throw errors.notFound("EXEC-t4rg", `target "${missing[0]}" not found (execution.targets)`);
    for (const inc of args.includes) {
      const x = await w.tx.execution.findUnique({ where: { instanceId_id: { instanceId, id: inc } }, select: { conditionType: true } });
      if (!x) throw errors.notFound("EXEC-1ncl", `included execution "${inc}" not found (execution.includes)`);
      if (x.conditionType !== args.type || conditionTypeOfId(inc) !== args.type) {
        throw errors.invalidArgument("EXEC-1nct", `invalid execution.includes: "${inc}" is not a ${args.type} execution`);
      }
    }
    await checkNoCycle(w, instanceId, id, args.includes);
    const current = await w.tx.execution.findUnique({ where: { instanceId_id: { instanceId, id } } });
    const same = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
    if (current && same(current.targets, args.targets) && same(current.includes, args.includes)) {
      return { details: { id, sequence: current.sequence, changeDate: current.changeDate, instanceId }, created: false };
    }
    const [e] = await w.push(instanceId, args.creator, [
      executionSet.event({ aggregateId: id, resourceOwner: instanceId }, { conditionType: args.type, targets: args.targets, includes: args.includes }),
    ]);
    return { details: { id, sequence: e!.sequence, changeDate: e!.createdAt, instanceId }, created: !current };
  });
  return result;
}

/** Removes an execution, and takes it out of the executions that include it. */
export async function deleteExecution(es: EventStore, args: { instanceId: string; creator: string; id: string }): Promise<ResourceDetails> {
  const { result } = await es.execute(async (w): Promise<ResourceDetails> => {
    await w.lock(args.instanceId, "execution", args.id);
    const x = await w.tx.execution.findUnique({ where: { instanceId_id: { instanceId: args.instanceId, id: args.id } } });
    if (!x) throw errors.notFound("EXEC-n0tf", `execution "${args.id}" not found`);
    const cascade = await detachFromExecutions(w, args.instanceId, { include: x.id });
    const [e] = await w.push(args.instanceId, args.creator, [executionRemoved.event({ aggregateId: x.id, resourceOwner: args.instanceId }), ...cascade]);
    return { id: x.id, sequence: e!.sequence, changeDate: e!.createdAt, instanceId: args.instanceId };
  });
  return result;
}
