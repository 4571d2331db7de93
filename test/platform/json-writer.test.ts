import { readdirSync } from "node:fs";
import { join } from "node:path";
import { create, createFileRegistry, type DescField, type DescFile, type DescMessage, ScalarType, toJson } from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label as Label,
  FieldDescriptorProto_Type as Type,
  FileDescriptorProtoSchema,
  file_google_protobuf_any,
  file_google_protobuf_duration,
  file_google_protobuf_empty,
  file_google_protobuf_field_mask,
  file_google_protobuf_struct,
  file_google_protobuf_timestamp,
  file_google_protobuf_wrappers,
  isWrapperDesc,
} from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { jsonWriter, SERVER_JSON_WRITE } from "../../src/schema/json-writer.js";
import { projectRoot } from "../../src/storage/paths.js";

/**
 * The compiled JSON writer (src/schema/json-writer.ts) against protobuf-es: for every message type the API's
 * generated code declares (and the files they import: the well-known types, descriptor.proto), and for a
 * synthetic file with every field kind the API does not use (every map key type, wrappers, Any, FieldMask,
 * proto2 defaults and required fields, json_name), random messages with edge values must be written exactly
 * as `JSON.stringify(toJson(...))` writes them, or throw where it throws.
 */

type Local = Record<string, unknown>;
const THROWS = "<throws>";

// ---- the message types --------------------------------------------------------------------------------------

function* pbFiles(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) yield* pbFiles(path);
    else if (e.name.endsWith("_pb.ts")) yield path;
  }
}

/** Every file descriptor the generated code exports (gen/, protoc-gen-es). */
async function generatedFiles(): Promise<DescFile[]> {
  const files: DescFile[] = [];
  for (const path of pbFiles(join(projectRoot, "gen"))) {
    const mod = (await import(path)) as Record<string, unknown>;
    for (const v of Object.values(mod)) if (v && typeof v === "object" && (v as DescFile).kind === "file") files.push(v as DescFile);
  }
  return files;
}

/** The message types of the files and of the files they import, nested ones included. */
function collect(files: Iterable<DescFile>): DescMessage[] {
  const seenFiles = new Set<DescFile>();
  const messages: DescMessage[] = [];
  const addMessage = (m: DescMessage) => {
    messages.push(m);
    for (const n of m.nestedMessages) addMessage(n);
  };
  const addFile = (f: DescFile) => {
    if (seenFiles.has(f)) return;
    seenFiles.add(f);
    for (const d of f.dependencies) addFile(d);
    for (const m of f.messages) addMessage(m);
  };
  for (const f of files) addFile(f);
  return messages;
}

// A file with what the API's protos do not have: every scalar in every shape, every map key type, all wrappers,
// Any, FieldMask, Empty, Value, NullValue, json_name, proto3 optional; and a proto2 file with defaults and
// required fields.
const scalarTypes: [string, Type][] = [
  ["double", Type.DOUBLE],
  ["float", Type.FLOAT],
  ["int64", Type.INT64],
  ["uint64", Type.UINT64],
  ["int32", Type.INT32],
  ["fixed64", Type.FIXED64],
  ["fixed32", Type.FIXED32],
  ["bool", Type.BOOL],
  ["string", Type.STRING],
  ["bytes", Type.BYTES],
  ["uint32", Type.UINT32],
  ["sfixed32", Type.SFIXED32],
  ["sfixed64", Type.SFIXED64],
  ["sint32", Type.SINT32],
  ["sint64", Type.SINT64],
];
const keyTypes = scalarTypes.filter(([, t]) => t !== Type.DOUBLE && t !== Type.FLOAT && t !== Type.BYTES);
const wrappers = ["DoubleValue", "FloatValue", "Int64Value", "UInt64Value", "Int32Value", "UInt32Value", "BoolValue", "StringValue", "BytesValue"];

/** The JSON name protoc gives a field (descriptors built here have no compiler to fill it in). */
const camel = (name: string) => name.replace(/_(\w)/g, (_m, c: string) => c.toUpperCase());

interface FieldInit {
  name: string;
  number: number;
  label: Label;
  type: Type;
  typeName?: string;
  jsonName?: string;
  oneofIndex?: number;
  proto3Optional?: boolean;
  options?: { jstype: number };
  defaultValue?: string;
}

function sinkFile() {
  const fields: FieldInit[] = [];
  const nested: { name: string; field: FieldInit[]; options: { mapEntry: boolean } }[] = [];
  let n = 1;
  const field = (name: string, type: Type, extra: Partial<FieldInit> = {}) =>
    fields.push({ name, number: n++, label: Label.OPTIONAL, type, jsonName: camel(name), ...extra });
  for (const [name, t] of scalarTypes) field(`s_${name}`, t);
  for (const [name, t] of scalarTypes) field(`r_${name}`, t, { label: Label.REPEATED });
  const oneofs: { name: string }[] = [{ name: "choice" }];
  for (const [name, t] of scalarTypes) {
    oneofs.push({ name: `_o_${name}` });
    field(`o_${name}`, t, { proto3Optional: true, oneofIndex: oneofs.length - 1 });
  }
  const map = (name: string, key: Type, value: Type, typeName?: string) => {
    const entry = `${name.replace(/(^|_)(\w)/g, (_m, _u, c: string) => c.toUpperCase())}Entry`;
    nested.push({
      name: entry,
      field: [
        { name: "key", number: 1, label: Label.OPTIONAL, type: key, jsonName: "key" },
        { name: "value", number: 2, label: Label.OPTIONAL, type: value, typeName, jsonName: "value" },
      ],
      options: { mapEntry: true },
    });
    field(name, Type.MESSAGE, { label: Label.REPEATED, typeName: `.t.Sink.${entry}` });
  };
  for (const [name, t] of keyTypes) map(`m_${name}`, t, Type.STRING);
  map("m_sink", Type.STRING, Type.MESSAGE, ".t.Sink");
  map("m_color", Type.INT32, Type.ENUM, ".t.Color");
  map("m_bytes", Type.INT64, Type.BYTES);
  map("m_double", Type.BOOL, Type.DOUBLE);
  map("m_timestamp", Type.STRING, Type.MESSAGE, ".google.protobuf.Timestamp");
  map("m_struct", Type.STRING, Type.MESSAGE, ".google.protobuf.Struct");
  map("m_int64_value", Type.STRING, Type.MESSAGE, ".google.protobuf.Int64Value");
  field("color", Type.ENUM, { typeName: ".t.Color" });
  field("colors", Type.ENUM, { typeName: ".t.Color", label: Label.REPEATED });
  field("child", Type.MESSAGE, { typeName: ".t.Sink" });
  field("children", Type.MESSAGE, { typeName: ".t.Sink", label: Label.REPEATED });
  field("one_string", Type.STRING, { oneofIndex: 0 });
  field("one_sink", Type.MESSAGE, { typeName: ".t.Sink", oneofIndex: 0 });
  field("one_color", Type.ENUM, { typeName: ".t.Color", oneofIndex: 0 });
  field("one_wrapper", Type.MESSAGE, { typeName: ".google.protobuf.Int32Value", oneofIndex: 0 });
  field("one_struct", Type.MESSAGE, { typeName: ".google.protobuf.Struct", oneofIndex: 0 });
  field("one_bytes", Type.BYTES, { oneofIndex: 0 });
  field("one_int64", Type.INT64, { oneofIndex: 0 });
  for (const w of wrappers) field(`w_${w.toLowerCase()}`, Type.MESSAGE, { typeName: `.google.protobuf.${w}` });
  field("w_list", Type.MESSAGE, { typeName: ".google.protobuf.Int64Value", label: Label.REPEATED });
  for (const [name, wkt] of [
    ["timestamp", "Timestamp"],
    ["duration", "Duration"],
    ["struct", "Struct"],
    ["value", "Value"],
    ["list_value", "ListValue"],
    ["field_mask", "FieldMask"],
    ["empty", "Empty"],
    ["any", "Any"],
  ] as const)
    field(`k_${name}`, Type.MESSAGE, { typeName: `.google.protobuf.${wkt}` });
  field("timestamps", Type.MESSAGE, { typeName: ".google.protobuf.Timestamp", label: Label.REPEATED });
  field("structs", Type.MESSAGE, { typeName: ".google.protobuf.Struct", label: Label.REPEATED });
  field("values", Type.MESSAGE, { typeName: ".google.protobuf.Value", label: Label.REPEATED });
  field("null_value", Type.ENUM, { typeName: ".google.protobuf.NullValue" });
  field("json_named", Type.INT32, { jsonName: "custom_Name" });
  // jstype = JS_STRING: a 64-bit integer held as a string.
  field("long_string", Type.INT64, { options: { jstype: 1 } });
  return create(FileDescriptorProtoSchema, {
    name: "t/sink.proto",
    package: "t",
    syntax: "proto3",
    dependency: [
      "google/protobuf/any.proto",
      "google/protobuf/duration.proto",
      "google/protobuf/empty.proto",
      "google/protobuf/field_mask.proto",
      "google/protobuf/struct.proto",
      "google/protobuf/timestamp.proto",
      "google/protobuf/wrappers.proto",
    ],
    enumType: [{ name: "Color", value: ["COLOR_UNSPECIFIED", "COLOR_RED", "COLOR_GREEN"].map((name, number) => ({ name, number })) }],
    messageType: [{ name: "Sink", field: fields, nestedType: nested, oneofDecl: oneofs }],
  });
}

function proto2File() {
  const f = (name: string, number: number, label: Label, type: Type, extra: Partial<FieldInit> = {}): FieldInit => ({
    name,
    number,
    label,
    type,
    jsonName: camel(name),
    ...extra,
  });
  return create(FileDescriptorProtoSchema, {
    name: "t/old.proto",
    package: "t",
    syntax: "proto2",
    enumType: [{ name: "Shade", value: ["LIGHT", "DARK"].map((name, i) => ({ name, number: i + 3 })) }],
    messageType: [
      {
        name: "Old",
        field: [
          f("count", 1, Label.OPTIONAL, Type.INT32, { defaultValue: "7" }),
          f("name", 2, Label.REQUIRED, Type.STRING),
          f("shade", 3, Label.OPTIONAL, Type.ENUM, { typeName: ".t.Shade", defaultValue: "DARK" }),
          f("data", 4, Label.OPTIONAL, Type.BYTES, { defaultValue: "x" }),
          f("longs", 5, Label.REPEATED, Type.INT64),
          f("next", 6, Label.OPTIONAL, Type.MESSAGE, { typeName: ".t.Old" }),
          f("ratio", 7, Label.OPTIONAL, Type.DOUBLE, { defaultValue: "inf" }),
          f("flag", 8, Label.OPTIONAL, Type.BOOL, { defaultValue: "true" }),
          f("big", 9, Label.OPTIONAL, Type.UINT64, { defaultValue: "18446744073709551615" }),
        ],
      },
    ],
  });
}

function syntheticFiles(): DescFile[] {
  const wkt = [
    file_google_protobuf_any,
    file_google_protobuf_duration,
    file_google_protobuf_empty,
    file_google_protobuf_field_mask,
    file_google_protobuf_struct,
    file_google_protobuf_timestamp,
    file_google_protobuf_wrappers,
  ];
  const byName = new Map(wkt.map((f) => [f.proto.name, f]));
  const sink = createFileRegistry(sinkFile(), (name) => byName.get(name));
  const old = createFileRegistry(proto2File(), () => undefined);
  return [sink.getFile("t/sink.proto")!, old.getFile("t/old.proto")!];
}

// ---- random messages --------------------------------------------------------------------------------------------

/** mulberry32: the same messages on every run. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  return { next, int, pick, chance: (p: number) => next() < p };
}
type Rand = ReturnType<typeof prng>;

const strings = [
  "",
  "a",
  "ünïcödé",
  "\u0000\u001f",
  '"quoted" \\ back\nslash\t',
  "\ud800 lone",
  "😀",
  "</script>",
  "\u2028\u2029",
  "__proto__",
  "0",
  "toString",
];
const doubles = [
  0,
  -0,
  1,
  -1,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  1e21,
  1e-7,
  5e-324,
  Number.MAX_VALUE,
  -123.456,
  2 ** 53 + 2,
];
const int32s = [0, 1, -1, 2147483647, -2147483648, 42];
const uint32s = [0, 1, 4294967295, 2147483648];
const int64s = [0n, 1n, -1n, 9223372036854775807n, -9223372036854775808n, 9007199254740993n];
const uint64s = [0n, 1n, 18446744073709551615n, 9007199254740993n];

function scalarValue(r: Rand, t: ScalarType, longAsString: boolean): unknown {
  switch (t) {
    case ScalarType.DOUBLE:
      return r.chance(0.5) ? r.pick(doubles) : (r.next() - 0.5) * 10 ** r.int(30);
    case ScalarType.FLOAT:
      return Math.fround(r.chance(0.5) ? r.pick(doubles) : (r.next() - 0.5) * 10 ** r.int(30));
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return r.chance(0.5) ? r.pick(int32s) : r.int(2 ** 31) - 2 ** 30;
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return r.chance(0.5) ? r.pick(uint32s) : r.int(2 ** 32);
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64: {
      const v = r.chance(0.5) ? r.pick(int64s) : BigInt(r.int(2 ** 31)) * BigInt(r.int(2 ** 31)) - 2n ** 60n;
      return longAsString ? v.toString() : v;
    }
    case ScalarType.UINT64:
    case ScalarType.FIXED64: {
      const v = r.chance(0.5) ? r.pick(uint64s) : BigInt(r.int(2 ** 31)) * BigInt(r.int(2 ** 31));
      return longAsString ? v.toString() : v;
    }
    case ScalarType.BOOL:
      return r.chance(0.5);
    case ScalarType.STRING:
      return r.chance(0.6) ? r.pick(strings) : String.fromCharCode(...Array.from({ length: r.int(12) }, () => r.int(0x10000)));
    case ScalarType.BYTES:
      return Uint8Array.from({ length: r.pick([0, 1, 2, 3, 4, 17]) }, () => r.int(256));
  }
}

/** A value of the enum, now and then a number it does not name (written as the number). */
function enumValue(r: Rand, f: DescField): number {
  return r.chance(0.15) ? r.pick([99, -5, 1234567]) : r.pick(f.enum!.values).number;
}

function mapKey(r: Rand, t: ScalarType): string {
  if (t === ScalarType.STRING) return r.pick(["", "a", "b c", "0", "10", "-1", "4294967295", "é", '"', "constructor", "hasOwnProperty"]);
  if (t === ScalarType.BOOL) return String(r.chance(0.5));
  return String(scalarValue(r, t, false));
}

/** A JSON value as a Struct field holds it; now and then one protobuf-es refuses (NaN). */
function jsonValue(r: Rand, depth: number): unknown {
  switch (r.int(depth > 2 ? 4 : 6)) {
    case 0:
      return null;
    case 1:
      return r.chance(0.05) ? Number.NaN : r.pick(doubles.filter(Number.isFinite));
    case 2:
      return r.pick(strings);
    case 3:
      return r.chance(0.5);
    case 4:
      return Array.from({ length: r.int(4) }, () => jsonValue(r, depth + 1));
    default:
      return jsonObject(r, depth + 1);
  }
}

function jsonObject(r: Rand, depth: number): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (let i = r.int(4); i > 0; i--) o[r.pick(["a", "b", "1", "0", "z z", "ü", "x"])] = jsonValue(r, depth);
  return o;
}

/** Well-known types with rules of their own: mostly valid values at the edges of the range, a few beyond. */
const wktMessage: Record<string, (r: Rand) => Local> = {
  "google.protobuf.Timestamp": (r) => ({
    seconds: r.chance(0.03)
      ? r.pick([-62135596801n, 253402300800n])
      : r.pick([0n, -1n, 1n, -62135596800n, 253402300799n, 1700000000n, BigInt(r.int(2 ** 31)) - 2n ** 30n]),
    nanos: r.chance(0.03) ? r.pick([-1, 1000000000]) : r.pick([0, 1, 999999999, 1000000, 123000, 5000000, 120000000, r.int(1e9)]),
  }),
  "google.protobuf.Duration": (r) => {
    const seconds = r.chance(0.03) ? r.pick([315576000001n, -315576000001n]) : r.pick([0n, 1n, -1n, 315576000000n, -315576000000n, 3600n]);
    const sign = seconds < 0n ? -1 : seconds > 0n ? 1 : r.pick([-1, 1]);
    const nanos = r.pick([0, 1, 999999999, 1000000, 123000, 500000000]) * (r.chance(0.03) ? -sign : sign);
    return { seconds, nanos };
  },
  "google.protobuf.FieldMask": (r) => ({ paths: Array.from({ length: r.int(3) }, () => r.pick(["a", "foo_bar", "foo.bar_baz", "fooBar", "x__y"])) }),
  "google.protobuf.Any": (r) => ({ typeUrl: r.chance(0.9) ? "" : "type.googleapis.com/t.Sink", value: new Uint8Array(0) }),
};

/** A message with about half its fields set; below depth 3 its message fields are empty messages. */
function randomMessage(r: Rand, desc: DescMessage, depth: number): Local {
  const m = create(desc) as unknown as Local;
  const special = wktMessage[desc.typeName];
  if (special) return Object.assign(m, special(r));
  const doneOneofs = new Set<string>();
  for (const f of desc.fields) {
    if (f.oneof) {
      if (doneOneofs.has(f.oneof.name)) continue;
      doneOneofs.add(f.oneof.name);
      if (r.chance(0.4)) continue;
      const chosen = r.pick(f.oneof.fields);
      m[f.oneof.localName] = { case: chosen.localName, value: singular(r, chosen, depth) };
      continue;
    }
    // Required proto2 fields are nearly always set (unset, both writers refuse the message).
    if (r.chance(f.proto.label === Label.REQUIRED ? 0.02 : 0.45)) continue;
    if (f.fieldKind === "list") {
      m[f.localName] = Array.from({ length: r.pick([0, 1, 2, 3]) }, () => item(r, f, f.listKind, depth));
    } else if (f.fieldKind === "map") {
      const record: Local = {};
      for (let i = r.pick([0, 1, 2, 3]); i > 0; i--) record[mapKey(r, f.mapKey)] = item(r, f, f.mapKind, depth);
      m[f.localName] = record;
    } else {
      const v = singular(r, f, depth);
      if (v !== undefined) m[f.localName] = v;
    }
  }
  return m;
}

function singular(r: Rand, f: DescField, depth: number): unknown {
  if (f.fieldKind === "scalar") return scalarValue(r, f.scalar, f.longAsString);
  if (f.fieldKind === "enum") return enumValue(r, f);
  if (f.fieldKind !== "message") throw new Error("not a singular field");
  return messageValue(r, f, f.message, depth, !f.oneof);
}

function item(r: Rand, f: DescField, kind: "scalar" | "enum" | "message", depth: number): unknown {
  if (kind === "scalar") return scalarValue(r, f.scalar!, (f as { longAsString?: boolean }).longAsString ?? false);
  if (kind === "enum") return enumValue(r, f);
  return messageValue(r, f, f.message!, depth, false);
}

function messageValue(r: Rand, f: DescField, child: DescMessage, depth: number, unwrapped: boolean): unknown {
  // As protobuf-es holds them: a Struct outside a Value as its JSON object, a singular wrapper as its value.
  if (child.typeName === "google.protobuf.Struct" && f.parent.typeName !== "google.protobuf.Value") return jsonObject(r, 0);
  if (unwrapped && isWrapperDesc(child)) return scalarValue(r, child.fields[0]!.scalar!, false);
  return depth >= 3 ? create(child) : randomMessage(r, child, depth + 1);
}

// ---- the comparison -----------------------------------------------------------------------------------------------

function reference(desc: DescMessage, m: unknown, alwaysEmitImplicit: boolean): string {
  try {
    return JSON.stringify(toJson(desc, m as never, { alwaysEmitImplicit }));
  } catch {
    return THROWS;
  }
}

function written(desc: DescMessage, m: unknown, alwaysEmitImplicit: boolean): string {
  try {
    return jsonWriter(desc, { alwaysEmitImplicit })(m as never);
  } catch {
    return THROWS;
  }
}

const generated = collect(await generatedFiles());
const synthetic = collect(syntheticFiles());
const sink = synthetic.find((d) => d.typeName === "t.Sink")!;
const old = synthetic.find((d) => d.typeName === "t.Old")!;

describe("the compiled JSON writer", () => {
  it("is tried on every message type of the API", () => {
    expect(generated.length).toBeGreaterThan(300);
    expect(generated.map((d) => d.typeName)).toEqual(
      expect.arrayContaining(["svc.resources.user.v3alpha.SearchUsersResponse", "google.protobuf.Timestamp", "google.protobuf.Struct"]),
    );
  });

  for (const [name, types, perType] of [
    ["every message type of the API", generated, 25],
    ["messages with every kind of field", synthetic, 300],
  ] as const) {
    it(`writes ${name} as JSON.stringify(toJson(...)) does, with the server's options and without`, () => {
      const r = prng(31);
      let compared = 0;
      let refused = 0;
      for (const desc of types) {
        for (let i = 0; i < perType; i++) {
          const m = i === 0 ? create(desc) : randomMessage(r, desc, 0);
          for (const emit of [SERVER_JSON_WRITE.alwaysEmitImplicit, false]) {
            const want = reference(desc, m, emit);
            const got = written(desc, m, emit);
            if (got !== want) expect({ type: desc.typeName, emit, message: m, got }).toEqual({ type: desc.typeName, emit, message: m, got: want });
            compared++;
            if (want === THROWS) refused++;
          }
        }
      }
      // Most messages are written; the few both refuse are the edges beyond the range.
      expect(refused).toBeLessThan(compared / 4);
    });
  }

  const cases: [string, DescMessage, Local][] = [
    ["-0, NaN and the infinities", sink, { sDouble: -0, sFloat: Number.NaN, rDouble: [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 1e21, 5e-324] }],
    ["64-bit integers as strings", sink, { sInt64: -9223372036854775808n, sUint64: 18446744073709551615n, rSint64: [0n, -1n], longString: "-12" }],
    ["unknown enum numbers as numbers", sink, { color: 7, colors: [1, -3, 2], mColor: { 1: 2, 2: 99 } }],
    ["bytes in standard base64", sink, { sBytes: new Uint8Array([0xfb, 0xff, 0xfe]), rBytes: [new Uint8Array(0), new Uint8Array([1])] }],
    [
      "map keys of every type, integer-like ones first",
      sink,
      { mString: { b: "1", 10: "2", "": "3", 2: "4" }, mBool: { true: "t", false: "f" }, mUint64: { 18446744073709551615: "x" } },
    ],
    [
      "a oneof's message and wrapper",
      sink,
      { choice: { case: "oneWrapper", value: create(sink.fields.find((f) => f.name === "one_wrapper")!.message!, { value: 0 }) } },
    ],
    ["an unset proto3 optional beside a set one", sink, { oInt32: 0, oString: "" }],
    ["json_name", sink, { jsonNamed: 5 }],
    ["wrappers held as their values", sink, { wInt64value: 0n, wBytesvalue: new Uint8Array([1, 2]), wDoublevalue: Number.NaN, wStringvalue: "" }],
    ["a Struct field", sink, { kStruct: { b: [1, null, { c: "x" }], a: true, 1: -0 } }],
    ["proto2 defaults not set", old, { name: "x" }],
  ];
  it.each(cases)("writes %s as protobuf-es does", (_name, desc, init) => {
    const m = Object.assign(create(desc), init);
    for (const emit of [true, false]) {
      const want = JSON.stringify(toJson(desc, m as never, { alwaysEmitImplicit: emit }));
      expect(jsonWriter(desc, { alwaysEmitImplicit: emit })(m as never)).toBe(want);
    }
  });

  it("writes Timestamps and Durations with 0, 3, 6 or 9 digits of fraction", () => {
    const ts = generated.find((d) => d.typeName === "google.protobuf.Timestamp")!;
    const dur = generated.find((d) => d.typeName === "google.protobuf.Duration")!;
    const write = (desc: DescMessage, seconds: bigint, nanos: number) => jsonWriter(desc)(create(desc, { seconds, nanos }) as never);
    expect(write(ts, 0n, 0)).toBe('"1970-01-01T00:00:00Z"');
    expect(write(ts, 1700000000n, 120000000)).toBe('"2023-11-14T22:13:20.120Z"');
    expect(write(ts, -62135596800n, 1000)).toBe('"0001-01-01T00:00:00.000001Z"');
    expect(write(ts, 253402300799n, 999999999)).toBe('"9999-12-31T23:59:59.999999999Z"');
    expect(write(dur, 0n, -500000000)).toBe('"-0.500s"');
    expect(write(dur, -3n, -1)).toBe('"-3.000000001s"');
  });

  it("refuses what protobuf-es refuses, with its error", () => {
    const ts = generated.find((d) => d.typeName === "google.protobuf.Timestamp")!;
    const cases: [DescMessage, unknown][] = [
      [ts, create(ts, { seconds: 253402300800n })],
      [ts, create(ts, { nanos: -1 })],
      [old, create(old)],
      [sink, Object.assign(create(sink), { sInt32: "7" })],
      [sink, Object.assign(create(sink), { kStruct: { a: Number.NaN } })],
      [sink, Object.assign(create(sink), { kAny: { $typeName: "google.protobuf.Any", typeUrl: "type.googleapis.com/x.Y", value: new Uint8Array(0) } })],
      [sink, create(old)],
    ];
    for (const [desc, m] of cases) {
      const error = (() => {
        try {
          toJson(desc, m as never, SERVER_JSON_WRITE);
        } catch (e) {
          return (e as Error).message;
        }
        return "no error";
      })();
      expect(() => jsonWriter(desc)(m as never)).toThrow(error);
    }
  });
});
