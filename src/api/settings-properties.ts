import { create, ScalarType, type DescField, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { DurationSchema, type Duration } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import { callInfo } from "../authz/context.js";
import { changeSettings } from "../command/settings.js";
import { ownerOf, type ContextOwner } from "../domain/contexts.js";
import { changeOf, reportedOwner, type PropertyRequest, type ResolvedValue } from "../domain/settings.js";
import { propertiesOf, type PropertyName, type PropertyType, type SettingsKind } from "../domain/settings-kinds.js";
import type { EventStore } from "../eventstore/eventstore.js";
import type { SettingsQueries } from "../query/settings.js";
import { toOwner, toSettingsDetails } from "./convert.js";

/**
 * The settings services map their protos onto the kinds of src/domain/settings-kinds.ts by field name (the
 * proto's field `min_length` is the property `min_length`); everything else is the kinds' generic path. The
 * specification's Set* (a oneof of `set` and `reset`) and Resolved* (`value` and `owner`) messages are
 * mapped here once; a service whose proto has another shape (languages, feature flags) maps only that shape.
 */

/** A request: each property given is set or reset; the names are checked against the kind by the domain. */
export type SettingsRequest<K extends SettingsKind> = Partial<Record<PropertyName<K>, PropertyRequest>>;

/** Sets and resets properties in the request's context (the interceptor checked the permission there). */
export async function setSettings<K extends SettingsKind>(
  ctx: HandlerContext,
  es: EventStore,
  kind: K,
  request: SettingsRequest<K>,
  fieldOf: (property: string, item?: number) => string,
) {
  const { target, caller } = callInfo(ctx);
  const change = changeOf(kind, request, fieldOf);
  return toSettingsDetails(await changeSettings(es, { kind, instanceId: target.instance.id, owner: ownerOf(target), creator: caller.userId, change }));
}

/** A read in the request's context: each property with the owner to report, and the context's own details. */
export async function readSettings(ctx: HandlerContext, settings: SettingsQueries, kind: SettingsKind) {
  const { values, details } = await settings.read(kind, callInfo(ctx).target);
  return { values, self: details.owner, details: toSettingsDetails(details) };
}

/** A Resolve* response's fields: the context's details, and the Resolved* message `desc` filled in. */
export async function resolveSettings<D extends DescMessage>(ctx: HandlerContext, settings: SettingsQueries, kind: SettingsKind, desc: D) {
  const { values, self, details } = await readSettings(ctx, settings, kind);
  return { details, settings: resolvedMessage(kind, desc, values, self) };
}

// Proto values to property values and back, by the property's type.
const secondsOf = (d: Duration) => Number(d.seconds) + d.nanos / 1e9;
const durationOf = (s: number) => create(DurationSchema, { seconds: BigInt(Math.floor(s)), nanos: Math.round((s % 1) * 1e9) });
const fromProto: Record<PropertyType, (raw: unknown) => unknown> = {
  bool: (raw) => raw,
  // Beyond 2^53 the number is no safe integer: the domain refuses it.
  uint64: (raw) => Number(raw as bigint),
  duration: (raw) => secondsOf(raw as Duration),
  string: (raw) => raw,
  strings: (raw) => (raw as { value: string[] }).value,
};

function toProto(type: PropertyType, field: DescField, value: unknown): unknown {
  if (type === "uint64") return BigInt(value as number);
  if (type === "duration") return durationOf(value as number);
  // A list is of strings, or of messages of one string field (Language {key}).
  const item = field.fieldKind === "list" && field.listKind === "message" ? field.message : undefined;
  if (type === "strings" && item) return (value as string[]).map((s) => create(item, { [item.fields[0]!.localName]: s }));
  return value;
}

/** The requests of a message of Set* fields (SetBool, SetUInt64, SetString, SetStrings, SetDuration). */
export function requestOf<K extends SettingsKind>(kind: K, desc: DescMessage, message: object): SettingsRequest<K> {
  const properties = propertiesOf(kind);
  const request: Record<string, PropertyRequest> = {};
  for (const f of desc.fields) {
    const inner = (message as Record<string, unknown>)[f.localName] as Record<string, { case?: string; value?: unknown }> | undefined;
    const choice = f.message?.oneofs[0] && inner?.[f.message.oneofs[0].localName];
    if (choice?.case === "reset") request[f.name] = { reset: true };
    else if (choice?.case === "set") request[f.name] = { set: fromProto[properties[f.name]!.type](choice.value) };
  }
  return request as SettingsRequest<K>;
}

/** Sets and resets what a message of Set* fields asks for; errors name `settings.<field>.set`. */
export function setProperties(ctx: HandlerContext, es: EventStore, kind: SettingsKind, desc: DescMessage, message: object) {
  const fieldOf = (property: string, item?: number) => `settings.${property}.set${item === undefined ? "" : `.value[${item}]`}`;
  return setSettings(ctx, es, kind, requestOf(kind, desc, message), fieldOf);
}

/** A Resolved* message: for each field, the property's value and, unless set in `self` itself, its owner. */
export function resolvedMessage<D extends DescMessage>(kind: SettingsKind, desc: D, values: Map<string, ResolvedValue>, self: ContextOwner): MessageShape<D> {
  const properties = propertiesOf(kind);
  const init: Record<string, unknown> = {};
  for (const f of desc.fields) {
    const v = values.get(f.name)!;
    const valueField = f.message!.field.value!;
    const owner = reportedOwner(v, self);
    const value = toProto(properties[f.name]!.type, valueField, v.value);
    init[f.localName] = create(f.message!, { [valueField.localName]: value, ...(owner ? { owner: toOwner(owner) } : {}) });
  }
  return create(desc, init as never);
}

const scalarTypes: Partial<Record<ScalarType, PropertyType>> = { [ScalarType.BOOL]: "bool", [ScalarType.UINT64]: "uint64", [ScalarType.STRING]: "string" };

/** The property type a field carries, or undefined for none. */
function typeOfField(f: DescField | undefined): PropertyType | undefined {
  if (f?.fieldKind === "scalar") return scalarTypes[f.scalar];
  // A list of strings, or of messages of one string field (Language {key}).
  if (f?.fieldKind === "list") {
    const strings =
      f.listKind === "scalar"
        ? f.scalar === ScalarType.STRING
        : f.listKind === "message" && f.message.fields.length === 1 && typeOfField(f.message.fields[0]) === "string";
    return strings ? "strings" : undefined;
  }
  if (f?.fieldKind !== "message") return undefined;
  if (f.message.typeName === DurationSchema.typeName) return "duration";
  // SetStrings' `set`: SetStringsValue {repeated string value}.
  return typeOfField(f.message.field.value);
}

/**
 * Stops the server at start when a message and a kind disagree: every field named as a property (less
 * `others`) and carrying its type in `carrier(field)`, every property there (`settable`: those a request
 * may set; else all). A property renamed on one side cannot pass a test run.
 */
export function assertMatches(
  kind: SettingsKind,
  desc: DescMessage,
  carrier: (f: DescField) => DescField | undefined,
  opts: { settable?: boolean; others?: string[] } = {},
): void {
  const properties = Object.fromEntries(Object.entries(propertiesOf(kind)).filter(([, p]) => !(opts.settable && p.fixed)));
  const fields = desc.fields.filter((f) => !opts.others?.includes(f.name));
  const wrong = [
    ...fields.filter((f) => typeOfField(carrier(f)) !== properties[f.name]?.type).map((f) => `field ${f.name}`),
    ...Object.keys(properties)
      .filter((name) => !fields.some((f) => f.name === name))
      .map((name) => `property ${name}`),
  ];
  if (wrong.length) throw new Error(`${desc.typeName} does not match the ${kind} settings: ${wrong.join(", ")}`);
}

/** The field of a Set*, Resolved* or flag message that carries the value. */
export const carriedBy = (name: string) => (f: DescField) => f.message?.fields.find((x) => x.name === name);

/**
 * The two RPCs of a settings service of one kind, derived from its messages: Set (fields present are set or reset)
 * and Resolve (every property with the context it is inherited from). The messages are checked against the kind's
 * properties when the service is made, so a proto and the registry cannot drift apart.
 */
export function kindRpcs<S extends DescMessage, R extends DescMessage, SR extends DescMessage, RR extends DescMessage>(
  deps: { es: EventStore; settings: SettingsQueries },
  kind: SettingsKind,
  m: { set: S; resolved: R; setResponse: SR; resolveResponse: RR },
) {
  assertMatches(kind, m.set, carriedBy("set"), { settable: true });
  assertMatches(kind, m.resolved, carriedBy("value"));
  return {
    set: async (req: { settings?: MessageShape<S> }, ctx: HandlerContext) =>
      // Every settings response carries `details` (and Resolve's `settings`): what the generic types cannot see.
      create(m.setResponse, { details: await setProperties(ctx, deps.es, kind, m.set, req.settings!) } as unknown as MessageInitShape<SR>),
    resolve: async (_req: unknown, ctx: HandlerContext) =>
      create(m.resolveResponse, (await resolveSettings(ctx, deps.settings, kind, m.resolved)) as unknown as MessageInitShape<RR>),
  };
}
