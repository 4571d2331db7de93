import { create, type JsonObject } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { UserSchema } from "../../../gen/prisma/client.js";
import { State } from "../../../gen/svc/resources/object/v3alpha/object_pb.js";
import {
  AuthenticatorType,
  CreateUserSchemaResponseSchema,
  DeactivateUserSchemaResponseSchema,
  DeleteUserSchemaResponseSchema,
  GetUserSchemaResponseSchema,
  GetUserSchemaSchema,
  PatchUserSchemaResponseSchema,
  ReactivateUserSchemaResponseSchema,
  SearchUserSchemasResponseSchema,
  type UserSchemaSearchFilter,
  type UserSchemaService,
} from "../../../gen/svc/resources/userschema/v3alpha/user_schema_service_pb.js";
import { callInfo } from "../../authz/context.js";
import type { ChangeDetails } from "../../command/aggregate.js";
import { createUserSchema, patchUserSchema, removeUserSchema, setUserSchemaState } from "../../command/user-schemas.js";
import { errors } from "../../errors/errors.js";
import type { EventStore } from "../../eventstore/eventstore.js";
import type { ProjectionCache } from "../../query/cache.js";
import { UserSchemaQueries, type UserSchemaFilter } from "../../query/users.js";
import type { Database } from "../../storage/database.js";
import { toResourceDetails } from "../convert.js";
import { listDetails, listWindow, searchRequestOf, type SetFilter } from "../list.js";

const authenticatorName = (a: AuthenticatorType) => AuthenticatorType[a]!.toLowerCase();
const authenticatorOf = (name: string) => AuthenticatorType[name.toUpperCase() as keyof typeof AuthenticatorType] as AuthenticatorType;

/** User schemas (proto svc.resources.userschema.v3alpha), instance-wide. */
function userSchemaFilterOf(f: SetFilter<UserSchemaSearchFilter>): UserSchemaFilter {
  switch (f.case) {
    case "inIds":
      return { case: "inIds", value: f.value.ids };
    case "type":
      return f;
    case "state":
      // Any state but INACTIVE asks for the active ones.
      return { case: "state", value: f.value === State.EFFECTIVE_STATE_INACTIVE ? "inactive" : "active" };
  }
}

export function userSchemaService(deps: { es: EventStore; db: Database; cache: ProjectionCache }): ServiceImpl<typeof UserSchemaService> {
  const queries = new UserSchemaQueries(deps.db, deps.cache);
  const who = (ctx: HandlerContext, id = "") => ({ instanceId: callInfo(ctx).target.instance.id, creator: callInfo(ctx).caller.userId, id });
  const details = (d: ChangeDetails) => toResourceDetails(d, "instance");
  const toGet = (s: UserSchema) =>
    create(GetUserSchemaSchema, {
      details: toResourceDetails({ id: s.id, sequence: s.sequence, changeDate: s.changeDate, resourceOwner: s.instanceId }, "instance"),
      config: { type: s.type, schema: s.schema as JsonObject, possibleAuthenticators: s.possibleAuthenticators.map(authenticatorOf) },
      state: s.state === "active" ? State.EFFECTIVE_STATE_ACTIVE : State.EFFECTIVE_STATE_INACTIVE,
      revision: s.revision,
    });
  return {
    async createUserSchema(req, ctx) {
      const u = req.userSchema!;
      const config = { type: u.type, schema: u.schema ?? {}, possibleAuthenticators: u.possibleAuthenticators.map(authenticatorName) };
      return create(CreateUserSchemaResponseSchema, { details: details(await createUserSchema(deps.es, { ...who(ctx), config })) });
    },
    async patchUserSchema(req, ctx) {
      const u = req.userSchema!;
      const patch = {
        ...(u.type !== undefined ? { type: u.type } : {}),
        ...(u.schema !== undefined ? { schema: u.schema } : {}),
        ...(u.possibleAuthenticators.length ? { possibleAuthenticators: u.possibleAuthenticators.map(authenticatorName) } : {}),
      };
      return create(PatchUserSchemaResponseSchema, { details: details(await patchUserSchema(deps.es, { ...who(ctx, req.id), patch })) });
    },
    async getUserSchema(req, ctx) {
      const s = await queries.byId(callInfo(ctx).target.instance.id, req.id);
      if (!s) throw errors.notFound("USCH-n0t1", `user schema "${req.id}" not found`);
      return create(GetUserSchemaResponseSchema, { userSchema: toGet(s) });
    },
    async searchUserSchemas(req, ctx) {
      const page = await queries.search(callInfo(ctx).target.instance.id, searchRequestOf(req, userSchemaFilterOf), listWindow(req.query));
      return create(SearchUserSchemasResponseSchema, { details: listDetails(page), result: page.rows.map(toGet) });
    },
    async deactivateUserSchema(req, ctx) {
      return create(DeactivateUserSchemaResponseSchema, { details: details(await setUserSchemaState(deps.es, { ...who(ctx, req.id), active: false })) });
    },
    async reactivateUserSchema(req, ctx) {
      return create(ReactivateUserSchemaResponseSchema, { details: details(await setUserSchemaState(deps.es, { ...who(ctx, req.id), active: true })) });
    },
    async deleteUserSchema(req, ctx) {
      return create(DeleteUserSchemaResponseSchema, { details: details(await removeUserSchema(deps.es, who(ctx, req.id))) });
    },
  };
}
