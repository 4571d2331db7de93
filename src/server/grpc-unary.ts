import { ConnectError, type ConnectRouter } from "@connectrpc/connect";
import {
  createAsyncIterable,
  readAllBytes,
  type UniversalHandler,
  type UniversalServerRequest,
  type UniversalServerResponse,
} from "@connectrpc/connect/protocol";
import * as connectProtocol from "@connectrpc/connect/protocol-connect";
import * as grpcProtocol from "@connectrpc/connect/protocol-grpc";
import * as grpcWebProtocol from "@connectrpc/connect/protocol-grpc-web";
import { type ErrorLog, errors, unexpectedFault } from "../errors/errors.js";

/**
 * Unary gRPC and gRPC-web calls served through connect-es's Connect unary path. connect-es runs even a unary gRPC call
 * through its streaming pipeline (an async iterable per stage, envelopes split and joined, the response held
 * until its first bytes): measured with h2load, that made a gRPC call cost the server 1.7-1.9x the CPU of
 * the same call over REST, which itself passes through the Connect unary path (docs/performance.md). Here a
 * plain unary call (binary, uncompressed, exactly one message frame) is handed to the same handler as a
 * Connect unary request and its answer rewritten as gRPC: message frame, then `grpc-status` and the trailers
 * (gRPC-web: in a trailer frame at the end of the body, as connect-es's gRPC-web path writes them).
 * The interceptors, the request checks (decoding.ts), deadlines and errors are the handler's own, so both
 * routes behave alike. Anything else (compressed, JSON, several or no frames, a body above the limit,
 * streaming methods, gRPC-web-text) takes connect-es's own path as before, with the bytes already read handed on.
 */

/** The two protocols: how each names its binary content type and where its trailers go. */
interface Enveloped {
  contentType: string;
  /** The answer: the message frame (none for an error), then the trailers (`grpc-status` among them). */
  answer(header: Headers, message: Uint8Array | undefined, trailer: Headers): UniversalServerResponse;
}

const grpc: Enveloped = {
  contentType: grpcProtocol.contentTypeProto,
  answer: (header, message, trailer) => ({ status: 200, header, body: createAsyncIterable(message ? [frame(message)] : []), trailer }),
};

const webTrailers = grpcWebProtocol.createTrailerSerialization();
const grpcWeb: Enveloped = {
  contentType: grpcWebProtocol.contentTypeProto,
  answer: (header, message, trailer) => {
    const frames = message ? [frame(message)] : [];
    frames.push(frame(webTrailers.serialize(trailer), grpcWebProtocol.trailerFlag));
    return { status: 200, header, body: createAsyncIterable(frames) };
  },
};

/** The protocol of a binary gRPC or gRPC-web request, else undefined (JSON, gRPC-web-text, anything else). */
function envelopedOf(contentType: string | null): Enveloped | undefined {
  if (grpcProtocol.parseContentType(contentType)?.binary) return grpc;
  const web = grpcWebProtocol.parseContentType(contentType);
  return web?.binary && !web.text ? grpcWeb : undefined;
}

/** The longest timeout the Connect header can say (10 digits of milliseconds). */
const MAX_CONNECT_TIMEOUT_MS = 9_999_999_999;
/** Request headers of the gRPC protocol itself, which have no meaning in a Connect unary request. */
const GRPC_ONLY = ["content-length", "te", "accept-encoding", grpcProtocol.headerEncoding, grpcProtocol.headerAcceptEncoding, grpcProtocol.headerTimeout];

/** The first `limit` bytes of a body and, when there is more, the iterator holding the rest. */
async function readUpTo(body: AsyncIterable<Uint8Array>, limit: number): Promise<{ chunks: Uint8Array[]; rest?: AsyncIterator<Uint8Array> }> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const it = body[Symbol.asyncIterator]();
  for (let r = await it.next(); !r.done; r = await it.next()) {
    chunks.push(r.value);
    size += r.value.byteLength;
    if (size > limit) return { chunks, rest: it };
  }
  return { chunks };
}

async function* replay(chunks: Uint8Array[], rest?: AsyncIterator<Uint8Array>) {
  yield* chunks;
  if (rest) for (let r = await rest.next(); !r.done; r = await rest.next()) yield r.value;
}

/** The message of a body that is exactly one uncompressed frame, else undefined. */
function singleFrame(body: Uint8Array): Uint8Array | undefined {
  if (body.byteLength < 5 || body[0] !== 0) return undefined;
  const length = new DataView(body.buffer, body.byteOffset, 5).getUint32(1);
  return length === body.byteLength - 5 ? body.subarray(5) : undefined;
}

function frame(message: Uint8Array, flags = 0): Uint8Array {
  const out = new Uint8Array(message.byteLength + 5);
  out[0] = flags;
  new DataView(out.buffer).setUint32(1, message.byteLength);
  out.set(message, 5);
  return out;
}

/**
 * Turns the request's headers (connect-node makes them for this request alone) into a Connect unary request's,
 * in place; false, changing nothing, when its timeout cannot be said in the Connect header.
 */
function toConnectHeaders(header: Headers): boolean {
  const timeout = header.get(grpcProtocol.headerTimeout);
  if (timeout !== null) {
    const parsed = grpcProtocol.parseTimeout(timeout, Number.MAX_SAFE_INTEGER);
    if (parsed.error || parsed.timeoutMs === undefined || parsed.timeoutMs > MAX_CONNECT_TIMEOUT_MS) return false;
    header.set(connectProtocol.headerTimeout, String(parsed.timeoutMs));
  }
  for (const name of GRPC_ONLY) header.delete(name);
  header.set("content-type", connectProtocol.contentTypeUnaryProto);
  header.set(connectProtocol.headerProtocolVersion, connectProtocol.protocolVersion);
  return true;
}

/** The Connect unary answer in the caller's protocol: the handler's headers and trailers in their places, the status last. */
async function envelopedResponse(res: UniversalServerResponse, protocol: Enveloped): Promise<UniversalServerResponse> {
  const body = res.body === undefined ? new Uint8Array(0) : await readAllBytes(res.body as AsyncIterable<Uint8Array>, Number.MAX_SAFE_INTEGER);
  const [header, trailer] = connectProtocol.trailerDemux(res.header ?? new Headers());
  for (const name of ["content-type", "content-length", "content-encoding"]) header.delete(name);
  if (res.status === 200) {
    header.set("content-type", protocol.contentType);
    trailer.set(grpcProtocol.headerGrpcStatus, grpcProtocol.grpcStatusOk);
    return protocol.answer(header, body, trailer);
  }
  // connect-es answers every unary error with a JSON body; a bare status only means the request was malformed.
  const fallback = errors.internal("GRPC-5t4t", `the call was answered with HTTP ${res.status} and no error`);
  let error: ConnectError;
  try {
    error = connectProtocol.errorFromJsonBytes(body, undefined, fallback);
  } catch {
    error = fallback;
  }
  // A Connect error answer carries the error's metadata among its headers; gRPC clients read it from the
  // trailers (as connect-es's gRPC path sends it), so everything but the content type goes there.
  const errorTrailer = new Headers(trailer);
  for (const [name, value] of header) errorTrailer.append(name, value);
  return failure(protocol, error, errorTrailer);
}

function failure(protocol: Enveloped, error: ConnectError, trailer = new Headers()): UniversalServerResponse {
  grpcProtocol.setTrailerStatus(trailer, error);
  return protocol.answer(new Headers({ "content-type": protocol.contentType }), undefined, trailer);
}

function unaryEnveloped(handler: UniversalHandler, maxBytes: number, log: ErrorLog): UniversalHandler {
  const wrapped = async (req: UniversalServerRequest): Promise<UniversalServerResponse> => {
    const protocol = req.method === "POST" ? envelopedOf(req.header.get("content-type")) : undefined;
    const encoding = req.header.get(grpcProtocol.headerEncoding);
    const body = req.body;
    const plain = protocol && (encoding === null || encoding === "identity");
    if (!plain || typeof body !== "object" || body === null || !(Symbol.asyncIterator in body)) return handler(req);
    let read: Awaited<ReturnType<typeof readUpTo>>;
    try {
      read = await readUpTo(body as AsyncIterable<Uint8Array>, maxBytes + 5);
    } catch (e) {
      // The request body broke off (the client went away or reset the stream): answered as connect-es would.
      return failure(protocol, e instanceof ConnectError ? e : errors.aborted("GRPC-r3ad", "the request body could not be read", e));
    }
    const whole = read.rest ? undefined : read.chunks.length === 1 ? read.chunks[0]! : Buffer.concat(read.chunks);
    const message = whole && singleFrame(whole);
    if (!message || !toConnectHeaders(req.header)) return handler({ ...req, body: replay(read.chunks, read.rest) });
    try {
      return await envelopedResponse(await handler({ ...req, body: createAsyncIterable([message]) }), protocol);
    } catch (e) {
      return failure(protocol, e instanceof ConnectError ? e : unexpectedFault(log, e, { where: "gRPC unary" }));
    }
  };
  return Object.assign(wrapped, handler);
}

/** Without the server's logger, a fault's line (with its reference) goes to stderr. */
/**
 * Serves the router's unary methods' plain gRPC and gRPC-web calls through the Connect unary path (see above).
 * `log`: where a fault outside the handler's interceptors (which log their own) is logged under its reference.
 */
export function serveUnaryGrpcAsConnect(router: ConnectRouter, maxBytes: number, log: ErrorLog): void {
  for (const [i, h] of router.handlers.entries()) if (h.method.methodKind === "unary") router.handlers[i] = unaryEnveloped(h, maxBytes, log);
}
