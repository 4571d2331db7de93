import type { UserSchema } from "../../gen/prisma/client.js";
import { dataProblem, schemaProblem } from "../domain/json-schemas.js";
import { errors } from "../errors/errors.js";
import type { EventStore, EventWriter } from "../eventstore/eventstore.js";
import { newId } from "../ids.js";
import { changeAggregate, type ChangeDetails, withUniqueConflict } from "./aggregate.js";
import {
  type UserSchemaConfig,
  userSchemaAdded,
  userSchemaChanged,
  userSchemaDataSet,
  userSchemaDeactivated,
  userSchemaReactivated,
  userSchemaRemoved,
} from "../events/index.js";

/**
 * User schemas (instance-wide): a type name, a JSON Schema (draft 2020-12, src/domain/json-schemas.ts) and the
 * authenticators its users may have. A changed schema is a new revision; users keep the revision their data was
 * validated against until their data is set again.
 */
export const authenticatorTypes = ["username", "password", "webauthn", "totp", "otp_email", "otp_sms"];

const typeTaken = (type: string) => errors.alreadyExists("USCH-typ3", `a user schema of type "${type}" already exists`);

function checkSchema(schema: object | undefined, field: string) {
  const problem = schemaProblem(schema);
  if (problem) throw errors.invalidArgument("USCH-sch3", `invalid ${field}: ${problem}`);
}

export async function createUserSchema(es: EventStore, a: { instanceId: string; creator: string; config: UserSchemaConfig }): Promise<ChangeDetails> {
  checkSchema(a.config.schema, "user_schema.schema");
  const id = newId();
  const { result } = await withUniqueConflict(
    "UserSchema",
    () => typeTaken(a.config.type),
    () =>
      es.execute(async (w): Promise<ChangeDetails> => {
        if (await w.tx.userSchema.findFirst({ where: { instanceId: a.instanceId, type: a.config.type }, select: { id: true } })) throw typeTaken(a.config.type);
        const [e] = await w.push(a.instanceId, a.creator, [userSchemaAdded.event({ aggregateId: id, resourceOwner: a.instanceId }, a.config)]);
        return { id, sequence: e!.sequence, changeDate: e!.createdAt, instanceId: a.instanceId, resourceOwner: a.instanceId };
      }),
  );
  return result;
}

function changeUserSchema(
  es: EventStore,
  a: { instanceId: string; id: string; creator: string },
  decide: Parameters<typeof changeAggregate<UserSchema, "user_schema">>[1]["decide"],
) {
  return changeAggregate(es, {
    aggregateType: "user_schema",
    ...a,
    load: (w) => w.tx.userSchema.findFirst({ where: { id: a.id, instanceId: a.instanceId } }),
    notFound: () => errors.notFound("USCH-n0tf", `user schema "${a.id}" not found`),
    ownerOf: () => a.instanceId,
    decide,
  });
}

/** Changes what is given; a changed schema is the next revision. A type another schema has is ALREADY_EXISTS. */
export function patchUserSchema(es: EventStore, a: { instanceId: string; id: string; creator: string; patch: Partial<UserSchemaConfig> }) {
  if (a.patch.schema !== undefined) checkSchema(a.patch.schema, "user_schema.schema");
  return changeUserSchema(es, a, async (s, w) => {
    const p = a.patch;
    const changed: Partial<UserSchemaConfig> & { revision?: number } = {};
    if (p.type !== undefined && p.type !== s.type) {
      if (await w.tx.userSchema.findFirst({ where: { instanceId: a.instanceId, type: p.type }, select: { id: true } })) throw typeTaken(p.type);
      changed.type = p.type;
    }
    if (p.schema !== undefined && JSON.stringify(p.schema) !== JSON.stringify(s.schema)) Object.assign(changed, { schema: p.schema, revision: s.revision + 1 });
    if (p.possibleAuthenticators !== undefined && p.possibleAuthenticators.join() !== s.possibleAuthenticators.join())
      changed.possibleAuthenticators = p.possibleAuthenticators;
    return Object.keys(changed).length ? [userSchemaChanged.change(changed)] : [];
  });
}

export function setUserSchemaState(es: EventStore, a: { instanceId: string; id: string; creator: string; active: boolean }) {
  return changeUserSchema(es, a, (s) => ((s.state === "active") === a.active ? [] : [(a.active ? userSchemaReactivated : userSchemaDeactivated).change()]));
}

/** Refused while users use it (FAILED_PRECONDITION): their data would lose its schema. */
export function removeUserSchema(es: EventStore, a: { instanceId: string; id: string; creator: string }) {
  return changeUserSchema(es, a, async (s, w) => {
    const users = await w.tx.user.count({ where: { instanceId: a.instanceId, schemaId: s.id } });
    if (users) throw errors.failedPrecondition("USCH-1nus", `user schema "${s.id}" is used by ${users} user(s)`);
    return [userSchemaRemoved.change()];
  });
}

/**
 * The change that gives a user its schema and data, after checking the data against the schema's current
 * revision (INVALID_ARGUMENT naming the JSON path under `data`). An inactive schema takes no data.
 */
export async function schemaDataChange(w: EventWriter, a: { instanceId: string; schemaId: string; data: object }) {
  const s = await w.tx.userSchema.findFirst({ where: { id: a.schemaId, instanceId: a.instanceId } });
  if (!s) throw errors.notFound("USCH-n0t2", `schema_id: user schema "${a.schemaId}" not found`);
  if (s.state !== "active") throw errors.failedPrecondition("USCH-1nac", `schema_id: user schema "${a.schemaId}" is inactive`);
  const problem = dataProblem(`${s.id}:${s.revision}`, s.schema as object, a.data);
  if (problem) throw errors.invalidArgument("USCH-d4ta", `invalid data${problem.path}: ${problem.message}`);
  return userSchemaDataSet.change({ schemaId: s.id, schemaRevision: s.revision, data: a.data });
}
