import type { EventStore, StoredEvent, Tx } from "../eventstore/eventstore.js";
import type { Prisma } from "../../gen/prisma/client.js";
import {
  instanceAdded,
  instanceChanged,
  instanceDefaultOrgSet,
  instanceDomainAdded,
  instanceDomainPrimarySet,
  instanceDomainRemoved,
  instanceLimitsSet,
  instanceRemoved,
  orgAdded,
} from "./events.js";
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
  es.on(instanceDomainRemoved, async (tx, e) => {
    await tx.instanceDomain.deleteMany({ where: { domain: e.payload.domain, instanceId: e.aggregateId } });
    await touchInstance(tx, e);
  });
  es.on(instanceDomainPrimarySet, async (tx, e) => {
    await touchInstance(tx, e, { primaryDomain: e.payload.domain });
  });
  es.on(instanceChanged, async (tx, e) => {
    await touchInstance(tx, e, { name: e.payload.name });
  });
  // Every projection row of the instance, in every table that has an instance_id (found in the catalogue, so a
  // table added later is not forgotten); the log keeps its events.
  es.on(instanceRemoved, async (_tx, e, sql) => {
    const { rows } = await sql.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'instance_id' AND table_name <> 'events'",
    );
    for (const { table_name } of rows) await sql.query(`DELETE FROM "${table_name.replace(/"/g, "")}" WHERE instance_id = $1`, [e.aggregateId]);
    await sql.query("DELETE FROM instances WHERE id = $1", [e.aggregateId]);
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
