import { randomBytes } from "node:crypto";
import type { SecretBox } from "../crypto/secrets.js";
import { TargetAddressPolicy } from "../domain/target-addresses.js";
import type { TargetConfig } from "../domain/targets.js";
import { errors, isUniqueViolation } from "../errors/errors.js";
import type { EventStore, EventWriter, NewEvent } from "../eventstore/eventstore.js";
import { newId } from "../ids.js";
import { changedFields } from "./aggregate.js";
import { executionRemoved, executionSet, targetAdded, targetChanged, targetRemoved } from "../events/index.js";

export interface ResourceDetails {
  id: string;
  sequence: number;
  changeDate: Date;
  instanceId: string;
}

const MAX_TIMEOUT_MS = 270_000;

function checkTimeout(ms: number) {
  if (!(ms > 0) || ms > MAX_TIMEOUT_MS) {
    throw errors.invalidArgument("TARGET-t1me", `invalid target.timeout: must be more than 0s and at most ${MAX_TIMEOUT_MS / 1000}s`);
  }
}

/** http or https only, and no address SVC_TARGET_DENY denies (a host name is checked again at each call). */
function checkUrl(policy: TargetAddressPolicy, url: string, targetType: TargetConfig["targetType"] | undefined) {
  const problem = policy.urlProblem(url);
  if (problem) throw errors.invalidArgument("TARGET-ur1d", `invalid target.${targetType ?? "rest_webhook"}.url: ${problem}`);
}

const defaultPolicy = new TargetAddressPolicy();

/**
 * Names are unique per instance by the targets table's unique index, which the projection hits inside the
 * command's transaction: the event is then not stored either. No statement reads the name first (the create
 * path is hot, see bench/writes.ts: one round trip of five saved).
 */
async function withNameConflict<T>(run: () => Promise<T>, name: string): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (isUniqueViolation(e, "Target", "targets")) throw errors.alreadyExists("TARGET-n4me", `a target named "${name}" already exists`);
    throw e;
  }
}

export async function createTarget(
  es: EventStore,
  box: SecretBox,
  args: { instanceId: string; creator: string; config: TargetConfig; policy?: TargetAddressPolicy | undefined },
) {
  checkTimeout(args.config.timeoutMs);
  checkUrl(args.policy ?? defaultPolicy, args.config.url, args.config.targetType);
  const id = newId();
  // Shown once; kept encrypted with the master key.
  const signingKey = randomBytes(32).toString("base64url");
  const { result } = await withNameConflict(
    () =>
      es.execute(async (w) => {
        const [e] = await w.push(args.instanceId, args.creator, [
          targetAdded.event({ aggregateId: id, resourceOwner: args.instanceId }, { ...args.config, signingKey: box.seal(signingKey) }),
        ]);
        return { id, sequence: e!.sequence, changeDate: e!.createdAt, instanceId: args.instanceId };
      }),
    args.config.name,
  );
  return { details: result as ResourceDetails, signingKey };
}

async function existingTarget(w: EventWriter, instanceId: string, id: string) {
  await w.lock(instanceId, "target", id);
  const t = await w.tx.target.findFirst({ where: { id, instanceId } });
  if (!t) throw errors.notFound("TARGET-n0tf", `target "${id}" not found`);
  return t;
}

/** Only the given fields change; nothing changed means no event, and the current details. */
export async function patchTarget(
  es: EventStore,
  args: { instanceId: string; creator: string; id: string; changes: Partial<TargetConfig>; policy?: TargetAddressPolicy | undefined },
) {
  if (args.changes.timeoutMs !== undefined) checkTimeout(args.changes.timeoutMs);
  if (args.changes.url !== undefined) checkUrl(args.policy ?? defaultPolicy, args.changes.url, args.changes.targetType);
  const { result } = await withNameConflict(
    () =>
      es.execute(async (w): Promise<ResourceDetails> => {
        const t = await existingTarget(w, args.instanceId, args.id);
        const changed = changedFields(t, args.changes);
        if (!Object.keys(changed).length) return { id: t.id, sequence: t.sequence, changeDate: t.changeDate, instanceId: t.instanceId };
        const [e] = await w.push(args.instanceId, args.creator, [targetChanged.event({ aggregateId: t.id, resourceOwner: args.instanceId }, changed)]);
        return { id: t.id, sequence: e!.sequence, changeDate: e!.createdAt, instanceId: args.instanceId };
      }),
    args.changes.name ?? "",
  );
  return result;
}

/** Events that take `ref` (a target or an include) out of every execution that lists it; empty ones are removed. */
export async function detachFromExecutions(w: EventWriter, instanceId: string, ref: { target?: string; include?: string }): Promise<NewEvent[]> {
  const where = ref.target ? { targets: { has: ref.target } } : { includes: { has: ref.include! } };
  const users = await w.tx.execution.findMany({ where: { instanceId, ...where } });
  const events: NewEvent[] = [];
  for (const x of users) {
    await w.lock(instanceId, "execution", x.id);
    const targets = x.targets.filter((t) => t !== ref.target);
    const includes = x.includes.filter((i) => i !== ref.include);
    const execution = { aggregateId: x.id, resourceOwner: instanceId };
    events.push(
      targets.length || includes.length
        ? executionSet.event(execution, { conditionType: x.conditionType, targets, includes })
        : executionRemoved.event(execution),
    );
  }
  return events;
}

export async function deleteTarget(es: EventStore, args: { instanceId: string; creator: string; id: string }) {
  const { result } = await es.execute(async (w): Promise<ResourceDetails> => {
    const t = await existingTarget(w, args.instanceId, args.id);
    const cascade = await detachFromExecutions(w, args.instanceId, { target: t.id });
    const [e] = await w.push(args.instanceId, args.creator, [targetRemoved.event({ aggregateId: t.id, resourceOwner: args.instanceId }), ...cascade]);
    return { id: t.id, sequence: e!.sequence, changeDate: e!.createdAt, instanceId: args.instanceId };
  });
  return result;
}
