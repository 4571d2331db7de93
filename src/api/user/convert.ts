import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  AccessTokenType,
  EmailSchema,
  GetHumanUserSchema,
  GetMachineUserSchema,
  GetUserSchema,
  PhoneSchema,
  ProfileSchema,
  UserState,
  type GetUser,
  type PatchUser,
  type Password,
  type User,
} from "../../../gen/svc/resources/user/v3alpha/user_pb.js";
import type { NewHuman, NewMachine, PasswordInput, SchemaData, UserPatch } from "../../command/users.js";
import type { UserStateName, UserView } from "../../query/users.js";
import { errors } from "../../errors/errors.js";
import { orgRowDetails } from "../convert.js";

/** The projection's user states as the API names them: in its filters and its answers. */
export const userStates: Record<string, UserState> = {
  active: UserState.ACTIVE,
  inactive: UserState.INACTIVE,
  locked: UserState.LOCKED,
  initial: UserState.INITIAL,
} satisfies Record<UserStateName, UserState>;

export const tokenTypeOf = (t: AccessTokenType): "opaque" | "jwt" => (t === AccessTokenType.JWT ? "jwt" : "opaque");

export function passwordInputOf(p: Password): PasswordInput {
  return p.value.case === "hashedPassword"
    ? { hash: p.value.value, changeRequired: p.changeRequired }
    : { plain: p.value.value ?? "", changeRequired: p.changeRequired };
}

export function newUserOf(u: User): { human?: NewHuman; machine?: NewMachine; password?: PasswordInput } {
  if (u.type.case === "machine") {
    const m = u.type.value;
    return { machine: { username: u.username, name: m.name, description: m.description, accessTokenType: tokenTypeOf(m.accessTokenType) } };
  }
  const h = u.type.value!;
  const p = h.profile!;
  return {
    human: {
      username: u.username,
      givenName: p.givenName,
      familyName: p.familyName,
      nickName: p.nickName,
      displayName: p.displayName,
      preferredLanguage: p.preferredLanguage,
      email: h.email!.address,
      emailVerified: h.email!.isVerified,
      ...(h.phone?.number ? { phone: h.phone.number, phoneVerified: h.phone.isVerified } : {}),
    },
    ...(h.password ? { password: passwordInputOf(h.password) } : {}),
  };
}

/** A user schema and the data for it, as create and patch give them (data without a schema is refused). */
export function schemaDataOf(u: { schemaId?: string | undefined; data?: JsonObject | undefined }): SchemaData | undefined {
  if (u.schemaId === undefined) {
    if (u.data !== undefined) throw errors.invalidArgument("USER-d4ta", "invalid user.schema_id: data needs the schema it follows");
    return undefined;
  }
  return { schemaId: u.schemaId, data: u.data ?? {} };
}

export function patchOf(p: PatchUser): UserPatch {
  const out: UserPatch = {};
  if (p.username !== undefined) out.username = p.username;
  const schemaData = schemaDataOf(p);
  if (schemaData) out.schemaData = schemaData;
  if (p.type.case === "human") {
    const h = p.type.value;
    out.human = {
      givenName: h.givenName,
      familyName: h.familyName,
      nickName: h.nickName,
      displayName: h.displayName,
      preferredLanguage: h.preferredLanguage,
      ...(h.email ? { email: { address: h.email.address, verified: h.email.isVerified } } : {}),
      ...(h.phone ? { phone: { number: h.phone.number, verified: h.phone.isVerified } } : {}),
    };
  } else if (p.type.case === "machine") {
    const m = p.type.value;
    out.machine = {
      name: m.name,
      description: m.description,
      ...(m.accessTokenType !== undefined ? { accessTokenType: tokenTypeOf(m.accessTokenType) } : {}),
    };
  }
  return out;
}

export function toGetUser(u: UserView): GetUser {
  // Fields named one by one: spreading a row into an object literal with one more key takes V8's slow path,
  // about 6 µs a row (a third of a search page's CPU, docs/performance.md).
  const base = create(GetUserSchema, {
    details: orgRowDetails(u.id, u),
    state: userStates[u.state] ?? UserState.UNSPECIFIED,
    username: u.username,
  });
  if (u.schemaId) {
    base.schemaId = u.schemaId;
    base.schemaRevision = BigInt(u.schemaRevision ?? 0);
    base.data = (u.data ?? {}) as JsonObject;
  }
  if (u.kind === "machine") {
    base.type = {
      case: "machine",
      value: create(GetMachineUserSchema, {
        name: u.displayName,
        description: u.description ?? "",
        accessTokenType: u.accessTokenType === "jwt" ? AccessTokenType.JWT : AccessTokenType.OPAQUE,
        hasSecret: !!u.secretHash,
      }),
    };
    return base;
  }
  const human = create(GetHumanUserSchema, {
    profile: create(ProfileSchema, {
      givenName: u.givenName ?? "",
      familyName: u.familyName ?? "",
      nickName: u.nickName ?? "",
      displayName: u.displayName,
      preferredLanguage: u.preferredLanguage ?? "",
    }),
    email: create(EmailSchema, { address: u.email ?? "", isVerified: u.emailVerified }),
    passwordChangeRequired: u.passwordChangeRequired,
  });
  if (u.phone) human.phone = create(PhoneSchema, { number: u.phone, isVerified: u.phoneVerified });
  if (u.passwordChanged) human.passwordChanged = timestampFromDate(u.passwordChanged);
  base.type = { case: "human", value: human };
  return base;
}
