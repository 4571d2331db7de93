/**
 * The rules every kind of settings follows (settings-kinds.ts declares the kinds): a request sets or resets
 * single properties of one context; only what really changes is stored; a read takes each property from the
 * nearest context that sets it, else the built-in value, and reports the context it comes from.
 */
import { errors } from "../errors/errors.js";
import { sameOwner, systemOwner, type ContextOwner } from "./contexts.js";
import { propertiesOf, type Property, type PropertyType, type SettingsKind } from "./settings-kinds.js";

/** One property of a request: a value to set in the context, or reset (it falls back to the parent's value). */
export type PropertyRequest = { set: unknown } | { reset: true };

/** A change of one context's settings, as its event stores it (the `SettingsSet` payload's `set` and `reset`). */
export interface SettingsChange {
  set: Record<string, unknown>;
  reset: string[];
}

export type StoredValues = Record<string, unknown>;

export interface ResolvedValue {
  value: unknown;
  /** The context that set the value; the system for a built-in value. */
  owner: ContextOwner;
  /** Set nowhere: the built-in value. */
  builtIn: boolean;
}

// The API converts proto values to these types; a value of another type is a client's (uint64 beyond 2^53).
const conforms: Record<PropertyType, (v: unknown) => boolean> = {
  bool: (v) => typeof v === "boolean",
  uint64: (v) => Number.isSafeInteger(v) && (v as number) >= 0,
  duration: (v) => typeof v === "number" && Number.isFinite(v) && v >= 0,
  string: (v) => typeof v === "string",
  strings: (v) => Array.isArray(v) && v.every((s) => typeof s === "string"),
};
const expected: Record<PropertyType, string> = {
  bool: "true or false",
  uint64: `a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`,
  duration: "a duration of 0 or more",
  string: "a string",
  strings: "a list of strings",
};

function settable(kind: SettingsKind, name: string): Property {
  const p = propertiesOf(kind)[name];
  // The services map their protos onto the declared names, checked when they are built: this is a bug.
  if (!p || p.fixed) throw errors.internal("SET-pr0p", `the ${kind} settings have no property ${name} to set`);
  return p;
}

/**
 * The change a request asks for, checked against the kind's declaration (INVALID_ARGUMENT naming the field).
 * `fieldOf` spells a property, and an item of a list, as the request does. Lists are stored without repeats.
 */
export function changeOf(
  kind: SettingsKind,
  request: Record<string, PropertyRequest | undefined>,
  fieldOf: (property: string, item?: number) => string,
): SettingsChange {
  const change: SettingsChange = { set: {}, reset: [] };
  for (const [name, r] of Object.entries(request)) {
    if (!r) continue;
    const p = settable(kind, name);
    if ("reset" in r) {
      change.reset.push(name);
      continue;
    }
    const invalid = (problem: string, item?: number) => errors.invalidArgument("SET-v4lu", `invalid ${fieldOf(name, item)}: ${problem}`);
    if (!conforms[p.type](r.set)) throw invalid(`must be ${expected[p.type]}`);
    const items = p.type === "strings" ? (r.set as string[]) : [r.set as string | number | boolean];
    items.forEach((item, i) => {
      const problem = p.check?.(item);
      if (problem) throw invalid(problem, p.type === "strings" ? i : undefined);
    });
    change.set[name] = p.type === "strings" ? [...new Set(items)] : r.set;
  }
  return change;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** What of `change` really changes the context's stored values: a request that changes nothing stores nothing. */
export function effectiveChange(current: StoredValues, change: SettingsChange): SettingsChange | undefined {
  const set = Object.fromEntries(Object.entries(change.set).filter(([k, v]) => !(k in current) || !same(current[k], v)));
  const reset = change.reset.filter((k) => k in current && !(k in change.set));
  return Object.keys(set).length || reset.length ? { set, reset } : undefined;
}

/** The context's stored values after a change (the projection does the same in SQL: src/command/settings.ts). */
export function applyChange(current: StoredValues, change: SettingsChange): StoredValues {
  const values = { ...current, ...change.set };
  for (const k of change.reset) delete values[k];
  return values;
}

/**
 * Each property from the first context of `chain` that sets it, else its built-in value, owned by the system.
 * `chain` runs from the context asked about up to the system; `stored[i]` is what `chain[i]` set. Values of
 * properties no longer declared are ignored; fixed properties are always built in.
 */
export function resolveAlong(kind: SettingsKind, chain: readonly ContextOwner[], stored: readonly (StoredValues | undefined)[]): Map<string, ResolvedValue> {
  const out = new Map<string, ResolvedValue>();
  for (const [name, p] of Object.entries(propertiesOf(kind))) {
    const i = p.fixed ? -1 : stored.findIndex((values) => values !== undefined && name in values);
    out.set(name, i < 0 ? { value: p.default, owner: systemOwner, builtIn: true } : { value: stored[i]![name], owner: chain[i]!, builtIn: false });
  }
  return out;
}

/** The owner a read in `self` reports: none for a value set in `self` itself, else where it comes from. */
export function reportedOwner(v: ResolvedValue, self: ContextOwner): ContextOwner | undefined {
  return !v.builtIn && sameOwner(v.owner, self) ? undefined : v.owner;
}
