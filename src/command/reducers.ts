import type { EventStore, StoredEvent, Tx } from "../eventstore/eventstore.js";
import type { Prisma } from "../../gen/prisma/client.js";
import { EventTypes, type ContextType } from "./events.js";

type P = Record<string, unknown>;
const str = (p: P, k: string) => String(p[k] ?? "");

/** Projections: each reducer runs in the transaction that appends its event. */
export function registerReducers(es: EventStore): void {
  es.on(EventTypes.instanceAdded, async (tx, e) => {
    await tx.instance.create({
      data: { id: e.aggregateId, name: str(e.payload, "name"), sequence: e.sequence, createdAt: e.createdAt, changeDate: e.createdAt },
    });
  });
  const touchInstance = (tx: Tx, e: StoredEvent, data: Prisma.InstanceUpdateInput = {}) =>
    tx.instance.update({ where: { id: e.aggregateId }, data: { ...data, sequence: e.sequence, changeDate: e.createdAt } });
  es.on(EventTypes.instanceDomainAdded, async (tx, e) => {
    await tx.instanceDomain.create({ data: { domain: str(e.payload, "domain"), instanceId: e.aggregateId } });
    await touchInstance(tx, e);
  });
  es.on(EventTypes.instanceDefaultOrgSet, async (tx, e) => {
    await touchInstance(tx, e, { defaultOrgId: str(e.payload, "orgId") });
  });
  es.on(EventTypes.orgAdded, async (tx, e) => {
    await tx.org.create({
      data: {
        id: e.aggregateId,
        instanceId: e.instanceId,
        name: str(e.payload, "name"),
        primaryDomain: str(e.payload, "primaryDomain"),
        sequence: e.sequence,
        createdAt: e.createdAt,
        changeDate: e.createdAt,
      },
    });
  });
  const reduceSettings = (kind: string) => async (tx: Tx, e: StoredEvent) => {
    const ownerType = str(e.payload, "ownerType");
    const ownerId = str(e.payload, "ownerId");
    const key = { kind_ownerType_ownerId: { kind, ownerType, ownerId } };
    const current = await tx.setting.findUnique({ where: key });
    const values: P = { ...((current?.values as P | undefined) ?? {}), ...((e.payload.set as P | undefined) ?? {}) };
    for (const k of (e.payload.reset as string[] | undefined) ?? []) delete values[k];
    const data = { values: values as Prisma.InputJsonValue, sequence: e.sequence, changeDate: e.createdAt };
    await tx.setting.upsert({ where: key, create: { kind, ownerType, ownerId, instanceId: e.instanceId, ...data }, update: data });
  };
  es.on(EventTypes.featureSet, reduceSettings("feature"));
  es.on(EventTypes.languageSet, reduceSettings("language"));
  es.on(EventTypes.passwordComplexitySet, reduceSettings("password_complexity"));
  es.on(EventTypes.lockoutSet, reduceSettings("lockout"));
  es.on(EventTypes.loginSettingsSet, reduceSettings("login"));
}
