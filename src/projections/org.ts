import type { Prisma } from "../../gen/prisma/client.js";
import type { StoredEvent, Tx } from "../eventstore/eventstore.js";
import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";

/** The row follows its aggregate's sequence, which every event of it advances (its domains' and members' too). */
const touch = async (tx: Tx, e: StoredEvent<object>, data: Prisma.OrgUpdateInput = {}) => {
  await tx.org.update({ where: { id: e.aggregateId }, data: { ...data, sequence: e.sequence, changeDate: e.createdAt } });
};

export const orgs = defineProjection("org", 1, (on) => {
  on(events.orgAdded, async (tx, e) => {
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
  on(events.orgChanged, (tx, e) => touch(tx, e, { name: e.payload.name, primaryDomain: e.payload.primaryDomain }));
  on(events.orgDeactivated, (tx, e) => touch(tx, e, { state: "inactive" }));
  on(events.orgReactivated, (tx, e) => touch(tx, e, { state: "active" }));
  // Everything of the organisation goes with it, each table in its own projection.
  on(events.orgRemoved, async (tx, e) => {
    await tx.org.delete({ where: { id: e.aggregateId } });
  });
  on(events.orgDomainAdded, (tx, e) => touch(tx, e));
  on(events.orgDomainValidationAdded, (tx, e) => touch(tx, e));
  on(events.orgDomainValidationFailed, (tx, e) => touch(tx, e));
  on(events.orgDomainVerified, (tx, e) => touch(tx, e));
  on(events.orgDomainPrimarySet, (tx, e) => touch(tx, e, { primaryDomain: e.payload.domain }));
  on(events.orgDomainRemoved, (tx, e) => touch(tx, e));
  on(events.memberEvents.org.added, (tx, e) => touch(tx, e));
  on(events.memberEvents.org.changed, (tx, e) => touch(tx, e));
  on(events.memberEvents.org.removed, (tx, e) => touch(tx, e));
});
