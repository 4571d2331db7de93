import type { EventStore, StoredEvent, Tx } from "../eventstore/eventstore.js";
import type { Prisma } from "../../gen/prisma/client.js";
import { instanceAdded, instanceDefaultOrgSet, instanceDomainAdded, instanceLimitsSet, orgAdded } from "./events.js";
import { registerSettingsReducers } from "./settings.js";

/** Projections: each reducer runs in the transaction that appends its event. */
export function registerReducers(es: EventStore): void {
  es.on(instanceAdded, async (tx, e) => {
    await tx.instance.create({
      data: { id: e.aggregateId, name: e.payload.name, sequence: e.sequence, createdAt: e.createdAt, changeDate: e.createdAt },
    });
  });
  const touchInstance = (tx: Tx, e: StoredEvent<object>, data: Prisma.InstanceUpdateInput = {}) =>
    tx.instance.update({ where: { id: e.aggregateId }, data: { ...data, sequence: e.sequence, changeDate: e.createdAt } });
  es.on(instanceDomainAdded, async (tx, e) => {
    await tx.instanceDomain.create({ data: { domain: e.payload.domain, instanceId: e.aggregateId } });
    await touchInstance(tx, e);
  });
  es.on(instanceLimitsSet, async (tx, e) => {
    const p = e.payload;
    await touchInstance(tx, e, {
      ...(p.block !== undefined ? { blocked: p.block } : {}),
      ...(p.auditLogRetentionS !== undefined ? { auditLogRetentionS: p.auditLogRetentionS } : {}),
    });
  });
  es.on(instanceDefaultOrgSet, async (tx, e) => {
    await touchInstance(tx, e, { defaultOrgId: e.payload.orgId });
  });
  es.on(orgAdded, async (tx, e) => {
    await tx.org.create({
      data: {
        id: e.aggregateId,
        instanceId: e.instanceId,
        name: e.payload.name,
        primaryDomain: e.payload.primaryDomain,
        sequence: e.sequence,
        createdAt: e.createdAt,
        changeDate: e.createdAt,
      },
    });
  });
  registerSettingsReducers(es);
}
