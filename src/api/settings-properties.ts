import { create, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { reflect, type ReflectMessage } from "@bufbuild/protobuf/reflect";
import type { HandlerContext } from "@connectrpc/connect";
import { callInfo, ownerOf } from "../authz/context.js";
import { settingsWritePermission } from "../authz/roles.js";
import { changeSettings, type SettingsChange, type SettingsKind } from "../command/settings.js";
import { errors } from "../errors/errors.js";
import type { EventStore } from "../eventstore/eventstore.js";
import { chainOfTarget } from "../query/features.js";
import type { ResolvedValue, SettingsOwner, SettingsQueries } from "../query/settings.js";
import { sameOwner, toOwner, toSettingsDetails } from "./convert.js";

/**
 * Settings whose properties are SetBool / SetUInt64 fields (set a value or reset it) and whose reads are
 * Resolved* fields (the value and the context it is inherited from). Both sides are derived from the
 * messages' descriptors: a property added to the proto needs only its default.
 */
const systemOwner: SettingsOwner = { type: "system", id: "" };

/** The owner a resolved value reports: none when set in the context itself; the system for built-in defaults. */
export function reportedOwner(v: ResolvedValue | undefined, self: SettingsOwner) {
  const from = v?.from ?? systemOwner;
  return sameOwner(from, self) ? undefined : toOwner(from);
}

/** The change a Set* message asks for: each present property is set or reset (field names as in the proto). */
export function changeOf(message: ReflectMessage, check: (name: string, value: unknown) => string | undefined): SettingsChange {
  const change: SettingsChange = { set: {}, reset: [] };
  for (const f of message.fields) {
    if (f.fieldKind !== "message" || !message.isSet(f)) continue;
    const inner = message.get(f) as ReflectMessage;
    const oneof = inner.desc.oneofs[0]!;
    const chosen = inner.oneofCase(oneof);
    if (!chosen) continue;
    if (chosen.name === "reset") change.reset.push(f.name);
    else {
      const raw = inner.get(chosen);
      const value = typeof raw === "bigint" ? Number(raw) : raw;
      const problem = check(f.name, value);
      if (problem) throw errors.invalidArgument("SET-v4lu", `invalid settings.${f.name}.set: ${problem}`);
      change.set[f.name] = value;
    }
  }
  return change;
}

/** Sets and resets properties in the request's context, with the permission that writes settings there. */
export async function setProperties(
  ctx: HandlerContext,
  es: EventStore,
  kind: SettingsKind,
  message: ReflectMessage,
  check: (name: string, value: unknown) => string | undefined = () => undefined,
) {
  const info = callInfo(ctx);
  const needed = settingsWritePermission[info.target.type];
  if (!info.permissions.has(needed)) throw errors.permissionDenied("SET-p3rm", `missing permission ${needed} in the ${info.target.type} context`);
  const details = await changeSettings(es, { kind, instanceId: info.target.instance.id, owner: ownerOf(info.target), creator: info.caller.userId, change: changeOf(message, check) });
  return toSettingsDetails(details);
}

/** The resolved properties of a Resolved* message, in the request's context, and the context's own details. */
export async function resolveProperties<D extends DescMessage>(ctx: HandlerContext, settings: SettingsQueries, kind: string, desc: D, defaults: Record<string, unknown>) {
  const { target } = callInfo(ctx);
  const self = ownerOf(target);
  const [values, own] = await Promise.all([settings.resolve(kind, chainOfTarget(target), defaults), settings.row(kind, self)]);
  const out = reflect(desc, create(desc) as MessageShape<D>);
  for (const f of out.fields) {
    if (f.fieldKind !== "message") continue;
    const v = values.get(f.name);
    const resolved = reflect(f.message, create(f.message));
    const valueField = resolved.desc.field.value!;
    const raw = v?.value;
    resolved.set(valueField, valueField.fieldKind === "scalar" && typeof resolved.get(valueField) === "bigint" ? BigInt(Number(raw ?? 0)) : !!raw);
    const owner = reportedOwner(v, self);
    const ownerField = resolved.desc.field.owner!;
    if (owner && ownerField.fieldKind === "message") resolved.set(ownerField, reflect(ownerField.message, owner));
    out.set(f, resolved);
  }
  return {
    details: toSettingsDetails({ sequence: own?.sequence ?? 0, changeDate: own?.changeDate, owner: self }),
    settings: out.message as MessageShape<D>,
  };
}
