import { errors } from "../errors/errors.js";
import type { EventStore, StoredEvent } from "../eventstore/eventstore.js";
import { instanceLimitsSet } from "../events/index.js";

/** What a Limit call changes: a property absent stays as it is; `auditLogRetentionS` null removes the retention. */
export interface LimitsChange {
  block?: boolean;
  auditLogRetentionS?: number | null;
}

/**
 * Sets the limits of several instances in one transaction (Limit is BulkLimit of one): each must exist
 * (NOT_FOUND naming its place in the request); an instance whose limits would not change gets no event.
 */
export async function setInstanceLimits(es: EventStore, a: { creator: string; limits: { instanceId: string; change: LimitsChange; field: string }[] }) {
  const { events } = await es.execute(async (w) => {
    for (const { instanceId, change, field } of a.limits) {
      await w.lock(instanceId, "instance", instanceId);
      const row = await w.tx.instance.findUnique({ where: { id: instanceId }, select: { blocked: true, auditLogRetentionS: true } });
      if (!row) throw errors.notFound("LIMIT-1nst", `${field}: instance "${instanceId}" not found`);
      const payload = {
        ...(change.block !== undefined && change.block !== row.blocked ? { block: change.block } : {}),
        ...(change.auditLogRetentionS !== undefined && change.auditLogRetentionS !== row.auditLogRetentionS
          ? { auditLogRetentionS: change.auditLogRetentionS }
          : {}),
      };
      if (Object.keys(payload).length)
        await w.push(instanceId, a.creator, [instanceLimitsSet.event({ aggregateId: instanceId, resourceOwner: instanceId }, payload)]);
    }
  });
  return events as StoredEvent[];
}
