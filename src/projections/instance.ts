import type { Prisma } from "../../gen/prisma/client.js";
import type { StoredEvent, Tx } from "../eventstore/eventstore.js";
import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";

/** The row follows its aggregate's sequence, which every event of it advances (its domains' and members' too). */
const touch = async (tx: Tx, e: StoredEvent<object>, data: Prisma.InstanceUpdateInput = {}) => {
  await tx.instance.update({ where: { id: e.aggregateId }, data: { ...data, sequence: e.sequence, changeDate: e.createdAt } });
};

export const instances = defineProjection("instance", 1, (on) => {
  on(events.instanceAdded, async (tx, e) => {
    await tx.instance.create({
      data: { id: e.aggregateId, name: e.payload.name, sequence: e.sequence, createdAt: e.createdAt, changeDate: e.createdAt },
    });
  });
  on(events.instanceDomainAdded, (tx, e) => touch(tx, e));
  on(events.instanceDomainRemoved, (tx, e) => touch(tx, e));
  on(events.instanceDomainPrimarySet, (tx, e) => touch(tx, e, { primaryDomain: e.payload.domain }));
  on(events.instanceChanged, (tx, e) => touch(tx, e, { name: e.payload.name }));
  // The instance's rows in the other tables: cascade.ts.
  on(events.instanceRemoved, async (_tx, e, sql) => {
    await sql.query("DELETE FROM instances WHERE id = $1", [e.aggregateId]);
  });
  on(events.instanceLimitsSet, (tx, e) => {
    const p = e.payload;
    return touch(tx, e, {
      ...(p.block !== undefined ? { blocked: p.block } : {}),
      ...(p.auditLogRetentionS !== undefined ? { auditLogRetentionS: p.auditLogRetentionS } : {}),
    });
  });
  on(events.instanceDefaultOrgSet, (tx, e) => touch(tx, e, { defaultOrgId: e.payload.orgId }));
  on(events.memberEvents.instance.added, (tx, e) => touch(tx, e));
  on(events.memberEvents.instance.changed, (tx, e) => touch(tx, e));
  on(events.memberEvents.instance.removed, (tx, e) => touch(tx, e));
});
