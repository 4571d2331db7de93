import type { Tx } from "../eventstore/eventstore.js";
import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";

const touch = async (tx: Tx, id: string, data: object, e: { sequence: number; createdAt: Date }) => {
  await tx.userSchema.update({ where: { id }, data: { ...data, sequence: e.sequence, changeDate: e.createdAt } });
};

/** JSON Schemas users may be created with (a user's data: user.ts). */
export const userSchemas = defineProjection("userSchema", 1, (on) => {
  on(events.userSchemaAdded, async (tx, e) => {
    const c = e.payload;
    await tx.userSchema.create({
      data: {
        id: e.aggregateId,
        instanceId: e.instanceId,
        type: c.type,
        schema: c.schema,
        possibleAuthenticators: c.possibleAuthenticators,
        state: "active",
        revision: 1,
        sequence: e.sequence,
        createdAt: e.createdAt,
        changeDate: e.createdAt,
      },
    });
  });
  on(events.userSchemaChanged, (tx, e) => touch(tx, e.aggregateId, e.payload, e));
  on(events.userSchemaDeactivated, (tx, e) => touch(tx, e.aggregateId, { state: "inactive" }, e));
  on(events.userSchemaReactivated, (tx, e) => touch(tx, e.aggregateId, { state: "active" }, e));
  on(events.userSchemaRemoved, async (tx, e) => {
    await tx.userSchema.delete({ where: { id: e.aggregateId } });
  });
});
