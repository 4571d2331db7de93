import { create, type DescField, type DescMessage, type JsonWriteStringOptions, type MessageShape, ScalarType, toJson } from "@bufbuild/protobuf";
import { base64Encode } from "@bufbuild/protobuf/wire";
import { FeatureSet_FieldPresence, isWrapperDesc } from "@bufbuild/protobuf/wkt";

/**
 * Canonical protobuf JSON written as text, compiled once per message type from its descriptor.
 *
 * `JSON.stringify(toJson(schema, message))` builds a tree of JSON objects for every answer and then walks it
 * again to print it; the writers here print the message directly. Each writes exactly the text that
 * `JSON.stringify(toJson(schema, message, { alwaysEmitImplicit }))` writes (no registry, field names in
 * lowerCamelCase, enums by name), which test/platform/json-writer.test.ts checks against protobuf-es for
 * every message type of the API with random messages.
 *
 * Timestamp, Duration and the wrappers are written here; Struct in a field (held as a JSON object) is walked
 * here as protobuf-es walks it. Struct, Value and ListValue as messages, FieldMask and Any are left to
 * protobuf-es (`toJson` for that message alone): the API answers none of them outside a Struct field, and
 * their rules (path casing, the type registry) are not worth a second copy. Anything a writer does not
 * expect (a value of the wrong type, a Timestamp out of range, a required proto2 field unset, a message of
 * another type) makes the message it is in go to `toJson` as well, which then throws its own error.
 */

/** The write options the Connect router uses (app.ts): every field, unset implicit ones with their zero value. */
export const SERVER_JSON_WRITE = { alwaysEmitImplicit: true } as const satisfies Partial<JsonWriteStringOptions>;

type Local = Record<string, unknown>;
type WriteMessage = (message: Local) => string;
type WriteValue = (value: unknown) => string;
/** A field's `"name":value`, or undefined when the field is not written. */
type WriteField = (message: Local) => string | undefined;

/** Thrown inside a writer for what only protobuf-es should answer; caught by the enclosing message's writer. */
class Unexpected extends Error {}
const UNEXPECTED = new Unexpected("left to protobuf-es");
function unexpected(): never {
  throw UNEXPECTED;
}

const IMPLICIT = FeatureSet_FieldPresence.IMPLICIT;
const LEGACY_REQUIRED = FeatureSet_FieldPresence.LEGACY_REQUIRED;
const hasOwn = Object.prototype.hasOwnProperty;
/** The range protobuf-es accepts for a Timestamp (0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z) and a Duration. */
const TIMESTAMP_MS_MIN = Date.parse("0001-01-01T00:00:00Z");
const TIMESTAMP_MS_MAX = Date.parse("9999-12-31T23:59:59Z");
const DURATION_SECONDS_MAX = 315576000000;
/** Well-known types whose JSON form protobuf-es writes (see above). */
const LEFT_TO_PROTOBUF_ES = new Set([
  "google.protobuf.Any",
  "google.protobuf.Struct",
  "google.protobuf.Value",
  "google.protobuf.ListValue",
  "google.protobuf.FieldMask",
]);

/** A finite number as JSON.stringify writes it (-0 as 0); NaN and the infinities as null. */
const num = (v: number): string => (Number.isFinite(v) ? `${v}` : "null");

interface Compiled {
  readonly emit: boolean;
  readonly options: Partial<JsonWriteStringOptions>;
  readonly cache: WeakMap<DescMessage, WriteMessage>;
}
const variants: Record<"emit" | "omit", Compiled> = {
  emit: { emit: true, options: { alwaysEmitImplicit: true }, cache: new WeakMap() },
  omit: { emit: false, options: { alwaysEmitImplicit: false }, cache: new WeakMap() },
};

/**
 * The writer of a message type: `JSON.stringify(toJson(desc, message, options))` without the tree. Only the
 * option `alwaysEmitImplicit` is supported (the server's, SERVER_JSON_WRITE, by default).
 */
export function jsonWriter<Desc extends DescMessage>(
  desc: Desc,
  options: { alwaysEmitImplicit?: boolean } = SERVER_JSON_WRITE,
): (message: MessageShape<Desc>) => string {
  return writerOf(desc, options.alwaysEmitImplicit ? variants.emit : variants.omit) as unknown as (message: MessageShape<Desc>) => string;
}

/** The message's canonical JSON text with the server's options. */
export function writeJson<Desc extends DescMessage>(desc: Desc, message: MessageShape<Desc>): string {
  return jsonWriter(desc)(message);
}

function writerOf(desc: DescMessage, c: Compiled): WriteMessage {
  return c.cache.get(desc) ?? compileMessage(desc, c);
}

function compileMessage(desc: DescMessage, c: Compiled): WriteMessage {
  const slow: WriteMessage = (m) => JSON.stringify(toJson(desc, m as never, c.options));
  if (LEFT_TO_PROTOBUF_ES.has(desc.typeName)) {
    c.cache.set(desc, slow);
    return slow;
  }
  const typeName = desc.typeName;
  const fields: WriteField[] = [];
  const body: WriteMessage = wellKnownBody(desc) ?? ((m) => fieldsText(fields, m));
  const write: WriteMessage = (m) => {
    // A message of another type: protobuf-es's ForeignFieldError.
    if (m.$typeName !== typeName) return slow(m);
    try {
      return body(m);
    } catch (e) {
      if (e === UNEXPECTED) return slow(m);
      throw e;
    }
  };
  // Cached before its fields are compiled: a recursive type finds itself instead of compiling forever.
  c.cache.set(desc, write);
  if (!isWellKnownBody(desc)) for (const f of desc.fields.concat().sort((a, b) => a.number - b.number)) fields.push(compileField(f, c));
  return write;
}

function fieldsText(fields: WriteField[], m: Local): string {
  let s = "";
  for (let i = 0; i < fields.length; i++) {
    const part = fields[i]!(m);
    if (part !== undefined) s = s === "" ? part : `${s},${part}`;
  }
  return `{${s}}`;
}

const isWellKnownBody = (desc: DescMessage) =>
  desc.typeName === "google.protobuf.Timestamp" || desc.typeName === "google.protobuf.Duration" || isWrapperDesc(desc);

/** Timestamp, Duration and the wrappers, written as protobuf-es writes them (wkt in its to-json.js). */
function wellKnownBody(desc: DescMessage): WriteMessage | undefined {
  switch (desc.typeName) {
    case "google.protobuf.Timestamp":
      return (m) => timestampText(m.seconds as bigint, m.nanos as number);
    case "google.protobuf.Duration":
      return (m) => durationText(m.seconds as bigint, m.nanos as number);
  }
  if (!isWrapperDesc(desc)) return undefined;
  const value = desc.fields[0]!;
  const writeScalar = scalarWriter(value);
  const zero = writeScalar((create(desc) as unknown as Local)[value.localName]);
  return (m) => {
    const v = m[value.localName];
    return v === undefined ? zero : writeScalar(v);
  };
}

function timestampText(seconds: bigint, nanos: number): string {
  const ms = Number(seconds) * 1000;
  if (ms < TIMESTAMP_MS_MIN || ms > TIMESTAMP_MS_MAX || nanos < 0 || nanos > 999999999) unexpected();
  let z = "Z";
  if (nanos > 0) {
    const digits = (nanos + 1000000000).toString().substring(1);
    if (digits.substring(3) === "000000") z = `.${digits.substring(0, 3)}Z`;
    else if (digits.substring(6) === "000") z = `.${digits.substring(0, 6)}Z`;
    else z = `.${digits}Z`;
  }
  return JSON.stringify(new Date(ms).toISOString().replace(".000Z", z));
}

function durationText(seconds: bigint, nanos: number): string {
  const s = Number(seconds);
  if (s > DURATION_SECONDS_MAX || s < -DURATION_SECONDS_MAX) unexpected();
  if ((s > 0 && nanos < 0) || (s < 0 && nanos > 0)) unexpected();
  let text = seconds.toString();
  if (nanos !== 0) {
    let digits = Math.abs(nanos).toString();
    digits = "0".repeat(9 - digits.length) + digits;
    if (digits.substring(3) === "000000") digits = digits.substring(0, 3);
    else if (digits.substring(6) === "000") digits = digits.substring(0, 6);
    text += `.${digits}`;
    if (nanos < 0 && s === 0) text = `-${text}`;
  }
  return JSON.stringify(`${text}s`);
}

// ---- fields ----------------------------------------------------------------------------------------------------

function compileField(f: DescField, c: Compiled): WriteField {
  const key = `${JSON.stringify(f.jsonName)}:`;
  const local = f.localName;
  if (f.fieldKind === "list") {
    const item = valueWriter(f, c);
    return (m) => {
      const list = m[local];
      if (!Array.isArray(list)) return unexpected();
      if (list.length === 0) return c.emit ? `${key}[]` : undefined;
      let s = item(list[0]);
      for (let i = 1; i < list.length; i++) s += `,${item(list[i])}`;
      return `${key}[${s}]`;
    };
  }
  if (f.fieldKind === "map") {
    const value = valueWriter(f, c);
    return (m) => {
      const record = m[local];
      if (typeof record !== "object" || record === null) return unexpected();
      const keys = Object.keys(record);
      if (keys.length === 0) return c.emit ? `${key}{}` : undefined;
      let s = "";
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i]!;
        s += `${i === 0 ? "" : ","}${JSON.stringify(k)}:${value((record as Local)[k])}`;
      }
      return `${key}{${s}}`;
    };
  }
  const value = valueWriter(f, c);
  if (f.oneof) {
    const oneof = f.oneof.localName;
    return (m) => {
      const selected = m[oneof] as { case?: string; value?: unknown } | undefined;
      if (selected === undefined || selected === null) return unexpected();
      return selected.case === local ? key + value(selected.value) : undefined;
    };
  }
  if (f.presence !== IMPLICIT) {
    // proto2 defaults and proto3 optional fields unset sit on the prototype, not on the message.
    const required = f.presence === LEGACY_REQUIRED;
    return (m) => {
      const v = m[local];
      if (v !== undefined && hasOwn.call(m, local)) return key + value(v);
      return required ? unexpected() : undefined;
    };
  }
  if (c.emit) return (m) => key + value(m[local]);
  // Implicit presence: written unless it is the zero value (the same comparisons as protobuf-es's).
  if (f.fieldKind === "enum") {
    const zero = f.enum.values[0]!.number;
    return (m) => (m[local] !== zero ? key + value(m[local]) : undefined);
  }
  switch (f.scalar) {
    case ScalarType.BOOL:
      return (m) => (m[local] !== false ? key + value(m[local]) : undefined);
    case ScalarType.STRING:
      return (m) => (m[local] !== "" ? key + value(m[local]) : undefined);
    case ScalarType.BYTES:
      return (m) => {
        const v = m[local];
        return !(v instanceof Uint8Array) || v.byteLength > 0 ? key + value(v) : undefined;
      };
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return (m) => (!Object.is(m[local], 0) ? key + value(m[local]) : undefined);
    default:
      // Loose comparison, as protobuf-es's: 0n, 0 and "0" are all zero.
      // biome-ignore lint/suspicious/noDoubleEquals: the same test as protobuf-es's
      return (m) => (m[local] != 0 ? key + value(m[local]) : undefined);
  }
}

/** The writer of one value of the field (an item of a list, a value of a map). */
function valueWriter(f: DescField, c: Compiled): WriteValue {
  const kind = f.fieldKind === "list" ? f.listKind : f.fieldKind === "map" ? f.mapKind : f.fieldKind;
  if (kind === "scalar") return scalarWriter(f);
  if (kind === "enum") return enumWriter(f);
  const child = f.message!;
  // A Struct in a field is held as the JSON object itself (protobuf-es's localMessageMapper).
  if (child.typeName === "google.protobuf.Struct" && f.parent.typeName !== "google.protobuf.Value") return (v) => structText(v);
  // A singular wrapper outside a oneof is held as its value.
  if (f.fieldKind === "message" && !f.oneof && isWrapperDesc(child)) {
    const wrapper = writerOf(child, c);
    const valueName = child.fields[0]!.localName;
    return (v) => wrapper({ $typeName: child.typeName, [valueName]: v });
  }
  let write: WriteMessage | undefined;
  return (v) => {
    write ??= writerOf(child, c);
    return write(v === undefined ? (create(child) as unknown as Local) : (v as Local));
  };
}

function enumWriter(f: DescField): WriteValue {
  const desc = f.enum!;
  if (desc.typeName === "google.protobuf.NullValue") return (v) => (typeof v === "number" ? "null" : unexpected());
  const names: Record<number, string> = Object.create(null);
  for (const v of desc.values) names[v.number] = JSON.stringify(v.jsonName);
  // A number the enum does not name is written as the number.
  return (v) => (typeof v === "number" ? (names[v] ?? num(v)) : unexpected());
}

function scalarWriter(f: DescField): WriteValue {
  switch (f.scalar) {
    case ScalarType.INT32:
    case ScalarType.SFIXED32:
    case ScalarType.SINT32:
    case ScalarType.FIXED32:
    case ScalarType.UINT32:
      return (v) => (typeof v === "number" ? num(v) : unexpected());
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE:
      return (v) => {
        if (typeof v !== "number") return unexpected();
        if (Number.isFinite(v)) return `${v}`;
        return Number.isNaN(v) ? '"NaN"' : v > 0 ? '"Infinity"' : '"-Infinity"';
      };
    case ScalarType.STRING:
      return (v) => (typeof v === "string" ? JSON.stringify(v) : unexpected());
    case ScalarType.BOOL:
      return (v) => (v === true ? "true" : v === false ? "false" : unexpected());
    case ScalarType.BYTES:
      return (v) => (v instanceof Uint8Array ? `"${base64Encode(v)}"` : unexpected());
    default:
      // 64-bit integers as decimal strings.
      return (v) => {
        if (typeof v === "bigint") return `"${v}"`;
        if (typeof v === "number" && Number.isInteger(v)) return `"${v}"`;
        return typeof v === "string" ? JSON.stringify(v) : unexpected();
      };
  }
}

// ---- google.protobuf.Struct held as JSON ----------------------------------------------------------------------

/** A Struct field's JSON object as protobuf-es writes it (anything but an object: {}). */
function structText(v: unknown): string {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return "{}";
  let s = "";
  for (const k of Object.keys(v)) s += `${s === "" ? "" : ","}${JSON.stringify(k)}:${jsonValueText((v as Local)[k])}`;
  return `{${s}}`;
}

/** A google.protobuf.Value held as JSON: NaN, the infinities and what JSON has no value for are protobuf-es's errors. */
function jsonValueText(v: unknown): string {
  switch (typeof v) {
    case "number":
      return Number.isFinite(v) ? `${v}` : unexpected();
    case "string":
      return JSON.stringify(v);
    case "boolean":
      return v ? "true" : "false";
    case "object": {
      if (v === null) return "null";
      if (!Array.isArray(v)) return structText(v);
      let s = "";
      for (let i = 0; i < v.length; i++) s += `${i === 0 ? "" : ","}${jsonValueText(v[i])}`;
      return `[${s}]`;
    }
    default:
      return unexpected();
  }
}
