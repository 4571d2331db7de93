import type { StoredEvent, Tx } from "../eventstore/eventstore.js";
import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";

/** A generated domain row, verified; primary where the organisation has no other primary. */
function generatedRow(e: StoredEvent<object>, domain: string, isPrimary: boolean) {
  return {
    orgId: e.aggregateId,
    instanceId: e.instanceId,
    domain,
    verified: true,
    isPrimary,
    generated: true,
    sequence: e.sequence,
    createdAt: e.createdAt,
    changeDate: e.createdAt,
  };
}

const touch = async (tx: Tx, e: StoredEvent<{ domain: string }>, data: object) => {
  await tx.orgDomain.update({
    where: { orgId_domain: { orgId: e.aggregateId, domain: e.payload.domain } },
    data: { ...data, sequence: e.sequence, changeDate: e.createdAt },
  });
};

/** An organisation's domains (src/command/org-domains.ts); the generated one follows the name. */
export const orgDomains = defineProjection("orgDomain", 1, (on) => {
  on(events.orgAdded, async (tx, e) => {
    await tx.orgDomain.create({ data: generatedRow(e, e.payload.primaryDomain, true) });
  });
  // Events of renames written before organisations had domains carry the new generated domain (orgs.ts).
  on(events.orgChanged, async (tx, e) => {
    if (!e.payload.primaryDomain) return;
    await tx.orgDomain.deleteMany({ where: { orgId: e.aggregateId, generated: true } });
    await tx.orgDomain.create({ data: generatedRow(e, e.payload.primaryDomain, true) });
  });
  on(events.orgDomainAdded, async (tx, e) => {
    const p = e.payload;
    await tx.orgDomain.create({
      data: {
        orgId: e.aggregateId,
        instanceId: e.instanceId,
        domain: p.domain,
        verified: p.verified,
        generated: !!p.generated,
        sequence: e.sequence,
        createdAt: e.createdAt,
        changeDate: e.createdAt,
      },
    });
  });
  on(events.orgDomainValidationAdded, (tx, e) => touch(tx, e, { validationType: e.payload.validationType, validationToken: e.payload.token }));
  on(events.orgDomainValidationFailed, (tx, e) => touch(tx, e, {}));
  on(events.orgDomainVerified, (tx, e) => touch(tx, e, { verified: true, validationToken: "" }));
  on(events.orgDomainPrimarySet, async (tx, e) => {
    await tx.orgDomain.updateMany({ where: { orgId: e.aggregateId, isPrimary: true }, data: { isPrimary: false } });
    await touch(tx, e, { isPrimary: true });
  });
  on(events.orgDomainRemoved, async (tx, e) => {
    await tx.orgDomain.delete({ where: { orgId_domain: { orgId: e.aggregateId, domain: e.payload.domain } } });
  });
  on(events.orgRemoved, async (tx, e) => {
    await tx.orgDomain.deleteMany({ where: { orgId: e.aggregateId } });
  });
});
