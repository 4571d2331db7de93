import { fromBinary, fromJson, type DescField, type DescMessage, type JsonObject, type JsonValue, type MessageShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter, type ContextValues } from "@connectrpc/connect";
import { compressionBrotli, compressionGzip } from "@connectrpc/connect-node";
import { compressedFlag, readAllBytes, type Compression, type UniversalHandler, type UniversalServerRequest } from "@connectrpc/connect/protocol";
import * as connectProtocol from "@connectrpc/connect/protocol-connect";
import * as grpcProtocol from "@connectrpc/connect/protocol-grpc";
import * as grpcWebProtocol from "@connectrpc/connect/protocol-grpc-web";
import { errors } from "../errors/errors.js";
import { isObserved, noteRpcCodeIn } from "./observe.js";

/**
 * A request body the server cannot decode is the client's mistake: INVALID_ARGUMENT, naming the field where
 * there is one. connect-es decodes before any interceptor runs, reports protobuf binary that does not parse
 * as INTERNAL ("parse binary: ..."), and JSON type errors with the message type but not where in the request
 * it is ("cannot decode message ...Language from JSON: 7"); no router option changes either. So every handler
 * decodes its request once more before connect-es does (20 to 50 µs a call, measured in process, against
 * calls that query the database), and a body that fails here never reaches connect-es's decoder. Failures travel as errors
 * thrown from the request body, which connect-es reports in each protocol's own way.
 */

/**
 * The largest request body the server reads: Fastify's bodyLimit and the Connect router's readMaxBytes (app.ts),
 * and here the bound of a body or message before and after inflation. These checks run before any interceptor,
 * so before authentication: inflating up to connect-es's default (4 GiB) let a 405-byte anonymous request take
 * 750 MiB (security review #2). zlib stops inflating as soon as its output passes the bound (maxOutputLength).
 */
export const BODY_LIMIT = 4 * 1024 * 1024;
/** What connect-fastify accepts by default; a body in another encoding is left to connect-es to refuse. */
const compressions: Compression[] = [compressionGzip, compressionBrotli];
const utf8 = new TextDecoder();

function reasonOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

// ---- JSON: where in the request the value is that does not decode -------------------------------------------

function fieldOf(desc: DescMessage, key: string): DescField | undefined {
  return desc.fields.find((f) => f.jsonName === key || f.name === key);
}

function decodeError(desc: DescMessage, json: JsonValue): Error | undefined {
  try {
    fromJson(desc, json);
    return undefined;
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
}

const isObject = (v: JsonValue | undefined): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);
/** Well-known types have their own JSON forms (a Duration is "10s"): they are decoded whole, not walked into. */
const isWellKnown = (desc: DescMessage) => desc.typeName.startsWith("google.protobuf.");
const shown = (v: JsonValue) => {
  const s = JSON.stringify(v);
  return s.length > 100 ? `${s.slice(0, 100)}...` : s;
};

/** protobuf-es's reason without its "cannot decode <type> from JSON" frame, which names a type, not a place. */
function reasonFor(e: Error, value: JsonValue): string {
  const m = e.message;
  const enumError = /^cannot decode enum (\S+) from JSON: /.exec(m);
  if (enumError) return `${shown(value)} is not a value of ${enumError[1]}`;
  const messageError = /^cannot decode message (\S+) from JSON: (.*)$/s.exec(m);
  if (messageError) return `not a valid ${messageError[1]}: ${messageError[2]}`;
  return m.replace(/^cannot decode (?:field|oneof) \S+ from JSON: /, "").replace(/^(?:list item #\d+|map entry .*?): /s, "");
}

interface Located {
  path: string;
  reason: string;
}

/** Why the value at `path` does not decode; a oneof set twice is an error of the oneof, one level down. */
function at(path: string, e: Error, value: JsonValue): Located {
  const oneof = /^cannot decode oneof \S+\.(\w+) from JSON: oneof (set multiple times .*)$/s.exec(e.message);
  if (oneof) return { path: path ? `${path}.${oneof[1]}` : oneof[1]!, reason: oneof[2]! };
  return { path, reason: reasonFor(e, value) };
}

/** The first field of `obj` that does not decode, as deep as the JSON goes; undefined if each decodes alone. */
function locate(desc: DescMessage, obj: JsonObject, prefix: string): Located | undefined {
  for (const [key, value] of Object.entries(obj)) {
    const f = fieldOf(desc, key);
    if (!f) return { path: prefix + (key.length > 100 ? `${key.slice(0, 100)}...` : key), reason: "unknown field" };
    const e = decodeError(desc, { [key]: value });
    if (!e) continue;
    const path = prefix + f.name;
    return within(f, key, value, path) ?? at(path, e, value);
  }
  return undefined;
}

/** For a field that does not decode: the list item or map entry that does not, or the field inside it. */
function within(f: DescField, key: string, value: JsonValue, path: string): Located | undefined {
  const nested = f.message && !isWellKnown(f.message) ? f.message : undefined;
  if (f.fieldKind === "message") return nested && isObject(value) ? locate(nested, value, `${path}.`) : undefined;
  const items: [string, JsonValue, JsonValue][] =
    f.fieldKind === "list" && Array.isArray(value)
      ? value.map((v, i) => [String(i), v, [v]])
      : f.fieldKind === "map" && isObject(value)
        ? Object.entries(value).map(([k, v]) => [k, v, { [k]: v }])
        : [];
  for (const [index, item, alone] of items) {
    const e = decodeError(f.parent, { [key]: alone });
    if (!e) continue;
    const itemPath = `${path}[${index}]`;
    return (nested && isObject(item) ? locate(nested, item, `${itemPath}.`) : undefined) ?? at(itemPath, e, item);
  }
  return undefined;
}

/**
 * Decodes a request's proto JSON as connect-es will (strictly: unknown fields and enum names are errors), and
 * throws INVALID_ARGUMENT naming the first field that does not decode, in the validation messages' form
 * ("invalid settings.default_language.key: expected string, got 7").
 */
export function checkJson(desc: DescMessage, json: JsonValue): void {
  decodeJson(desc, json);
}

/** The request decoded from its proto JSON as checkJson checks it: the REST gateway decodes each request once. */
export function decodeJson<Desc extends DescMessage>(desc: Desc, json: JsonValue): MessageShape<Desc> {
  try {
    return fromJson(desc, json);
  } catch (thrown) {
    const e = thrown instanceof Error ? thrown : new Error(String(thrown));
    // The request as a whole when no one field is to blame (a body that is no JSON object at all).
    const found = (isObject(json) ? locate(desc, json, "") : undefined) ?? at("", e, json);
    throw errors.invalidArgument("VALID-j5f1", `invalid ${found.path || "request"}: ${found.reason}`);
  }
}

function checkMessage(desc: DescMessage, data: Uint8Array, binary: boolean): void {
  if (binary) {
    try {
      fromBinary(desc, data);
    } catch (e) {
      throw errors.invalidArgument("VALID-b1n4", `the request is not a valid ${desc.typeName} in protobuf binary: ${reasonOf(e)}`);
    }
    return;
  }
  let json: JsonValue;
  try {
    json = JSON.parse(utf8.decode(data)) as JsonValue;
  } catch (e) {
    throw errors.invalidArgument("VALID-js0n", `the request is not valid JSON: ${reasonOf(e)}`);
  }
  checkJson(desc, json);
}

// ---- bodies of each protocol ----------------------------------------------------------------------------------

interface BodyFormat {
  /** gRPC, gRPC-web and Connect streaming frame each message; a Connect unary body is the message. */
  enveloped: boolean;
  binary: boolean;
  encodingHeader: string;
}

function formatOf(req: UniversalServerRequest): BodyFormat | undefined {
  if (req.method !== "POST") return undefined;
  const type = req.header.get("content-type");
  const connect = connectProtocol.parseContentType(type);
  if (connect)
    return {
      enveloped: connect.stream,
      binary: connect.binary,
      encodingHeader: connect.stream ? connectProtocol.headerStreamEncoding : connectProtocol.headerUnaryEncoding,
    };
  const grpc = grpcProtocol.parseContentType(type);
  if (grpc) return { enveloped: true, binary: grpc.binary, encodingHeader: grpcProtocol.headerEncoding };
  const web = grpcWebProtocol.parseContentType(type);
  // gRPC-web-text (base64) is refused by connect-es as an unsupported media type.
  if (web && !web.text) return { enveloped: true, binary: web.binary, encodingHeader: grpcWebProtocol.headerEncoding };
  return undefined;
}

async function decompress(c: Compression, data: Uint8Array): Promise<Uint8Array> {
  try {
    return await c.decompress(data, BODY_LIMIT);
  } catch (e) {
    const err = ConnectError.from(e);
    // The code connect-es answers for a message above readMaxBytes once inflated.
    if (err.code === Code.ResourceExhausted)
      throw errors.resourceExhausted("VALID-b0mb", `the request inflates with ${c.name} to more than the limit of ${BODY_LIMIT} bytes`);
    // A truncated gzip stream is INTERNAL in connect-node; what does not inflate is the client's.
    if (err.code !== Code.Internal) throw err;
    throw errors.invalidArgument("VALID-d3f1", `the request cannot be decompressed with ${c.name}: ${reasonOf(err.cause ?? err)}`);
  }
}

async function* checkedWhole(body: AsyncIterable<Uint8Array>, check: (d: Uint8Array) => void, c: Compression | null, length: string | null) {
  const bytes = await readAllBytes(body, BODY_LIMIT, length);
  check(c ? await decompress(c, bytes) : bytes);
  yield bytes;
}

/**
 * Each frame is checked as soon as it is complete, and the bytes pass on unchanged as they arrive: streams
 * stay streams (splitting and re-joining with connect-es's own transforms cost some 120 µs more per gRPC
 * call, measured in process; this 20 to 40 µs). `single`: the method takes exactly one request
 * message, which connect-es would enforce with UNIMPLEMENTED, a code for the server's shortcomings. Framing
 * errors (a truncated frame) are left to connect-es, which reports them as INVALID_ARGUMENT.
 */
async function* checkedEnvelopes(body: AsyncIterable<Uint8Array>, check: (d: Uint8Array) => void, c: Compression | null, single: boolean) {
  let parts: Uint8Array[] = [];
  let size = 0;
  let need = 5; // bytes that complete the next frame header, or the frame
  let count = 0;
  for await (const chunk of body) {
    parts.push(chunk);
    size += chunk.byteLength;
    while (size >= need) {
      const buf = parts.length === 1 ? parts[0]! : Buffer.concat(parts, size);
      const end = 5 + new DataView(buf.buffer, buf.byteOffset, 5).getUint32(1);
      // Refused before its bytes are gathered, as connect-es refuses a frame above readMaxBytes.
      if (end - 5 > BODY_LIMIT)
        throw errors.resourceExhausted("VALID-fr4m", `a request message of ${end - 5} bytes is larger than the limit of ${BODY_LIMIT} bytes`);
      parts = [buf];
      if (size < end) {
        need = end;
        break;
      }
      await checkFrame(buf[0]!, buf.subarray(5, end), ++count);
      parts = [buf.subarray(end)];
      size -= end;
      need = 5;
    }
    yield chunk;
  }
  if (single && count === 0 && size === 0) throw errors.invalidArgument("VALID-n0ms", "no request message");

  async function checkFrame(flags: number, data: Uint8Array, n: number) {
    // Clients send message frames only; end-of-stream and trailer flags belong to responses.
    if ((flags & ~compressedFlag) !== 0) throw errors.invalidArgument("VALID-fl4g", `a request frame with the flags 0x${flags.toString(16)}`);
    if (single && n > 1) throw errors.invalidArgument("VALID-tw0m", "more than one request message for a method that takes one");
    const compressed = (flags & compressedFlag) === compressedFlag;
    if (compressed && !c) throw errors.invalidArgument("VALID-c0mp", "a compressed message without the encoding named in a header");
    check(compressed && c ? await decompress(c, data) : data);
  }
}

/** A body refused here never reaches an interceptor: its code is noted for the request's metrics and span (observe.ts). */
async function* noted(body: AsyncIterable<Uint8Array>, values: ContextValues) {
  try {
    yield* body;
  } catch (e) {
    noteRpcCodeIn(values, ConnectError.from(e).code);
    throw e;
  }
}

function isByteStream(body: UniversalServerRequest["body"]): body is AsyncIterable<Uint8Array> {
  return typeof body === "object" && body !== null && Symbol.asyncIterator in body;
}

function checking(handler: UniversalHandler): UniversalHandler {
  const desc = handler.method.input;
  const single = handler.method.methodKind === "unary" || handler.method.methodKind === "server_streaming";
  const wrapped = (req: UniversalServerRequest) => {
    const format = formatOf(req);
    // A body that is not bytes is left to connect-es (the REST gateway decodes its requests itself).
    if (!format || !isByteStream(req.body)) return handler(req);
    const encoding = req.header.get(format.encodingHeader);
    const c = !encoding || encoding === "identity" ? null : compressions.find((x) => x.name === encoding);
    if (c === undefined) return handler(req);
    const check = (data: Uint8Array) => checkMessage(desc, data, format.binary);
    const body = format.enveloped ? checkedEnvelopes(req.body, check, c, single) : checkedWhole(req.body, check, c, req.header.get("content-length"));
    return handler({ ...req, body: req.contextValues && isObserved(req.contextValues) ? noted(body, req.contextValues) : body });
  };
  return Object.assign(wrapped, handler);
}

/** Makes every handler of the router check its request body before connect-es decodes it (see above). */
export function checkRequestsFirst(router: ConnectRouter): void {
  for (const [i, h] of router.handlers.entries()) router.handlers[i] = checking(h);
}
