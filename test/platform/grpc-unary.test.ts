import http2 from "node:http2";
import { gzipSync } from "node:zlib";
import { create, toBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, createConnectRouter } from "@connectrpc/connect";
import { createAsyncIterable, readAllBytes, type UniversalServerRequest } from "@connectrpc/connect/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HealthCheckRequestSchema } from "../../gen/grpc/health/v1/health_pb.js";
import { GetTargetRequestSchema } from "../../gen/svc/resources/action/v3alpha/action_service_pb.js";
import { ResolveLanguageSettingsRequestSchema, SetLanguageSettingsRequestSchema } from "../../gen/svc/settings/language/v3alpha/language_service_pb.js";
import { serveUnaryGrpcAsConnect } from "../../src/server/grpc-unary.js";
import { serviceDescriptors } from "../../src/server/services.js";
import { startTestServer, type TestServer } from "../support/server.js";

// Plain unary gRPC and gRPC-web calls are answered through connect-es's Connect unary path
// (src/server/grpc-unary.ts); compressed ones still take connect-es's own path. Both must answer every call alike.
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

const LANGUAGES = "/svc.settings.language.v3alpha.LanguageSettingsService";
const TARGETS = "/svc.resources.action.v3alpha.ActionService";

function frame(data: Uint8Array, flags = 0): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(data.length, 1);
  return Buffer.concat([head, data]);
}

interface Answer {
  status: number;
  contentType: string | undefined;
  grpcStatus: string | undefined;
  grpcMessage: string;
  /** Where grpc-status came: in the trailers, or in the headers (trailers-only). */
  statusIn: "trailers" | "headers" | "none";
  body: Buffer;
}

function grpcRaw(path: string, body: Buffer, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(t.url);
    session.on("error", reject);
    const req = session.request({ ":method": "POST", ":path": path, "content-type": "application/grpc", te: "trailers", ...headers });
    let head: http2.IncomingHttpHeaders = {};
    let tail: http2.IncomingHttpHeaders | undefined;
    const chunks: Buffer[] = [];
    req.on("response", (h) => (head = h));
    req.on("trailers", (h) => (tail = h));
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("close", () => {
      session.close();
      const status = tail?.["grpc-status"] ?? head["grpc-status"];
      resolve({
        status: Number(head[":status"]),
        contentType: head["content-type"],
        grpcStatus: status === undefined ? undefined : String(status),
        grpcMessage: decodeURIComponent(String(tail?.["grpc-message"] ?? head["grpc-message"] ?? "")),
        statusIn: tail?.["grpc-status"] !== undefined ? "trailers" : head["grpc-status"] !== undefined ? "headers" : "none",
        body: Buffer.concat(chunks),
      });
    });
    req.end(body);
  });
}

/** The same request twice: as one plain frame, and gzip-compressed (which connect-es's gRPC path serves). */
async function bothWays<D extends DescMessage>(path: string, schema: D, init: MessageInitShape<D>, headers: Record<string, string> = {}) {
  const bytes = toBinary(schema, create(schema, init));
  const plain = await grpcRaw(path, frame(bytes), headers);
  const compressed = await grpcRaw(path, frame(gzipSync(bytes), 1), { ...headers, "grpc-encoding": "gzip" });
  return { plain, compressed };
}

interface WebAnswer {
  status: number;
  contentType: string | null;
  /** The message frames' flags, in order; the trailer frame is 0x80. */
  flags: number[];
  message: Buffer | undefined;
  trailer: Record<string, string>;
}

/** A gRPC-web call over HTTP/1.1, its body taken apart into frames. */
async function grpcWebRaw(path: string, body: Buffer, headers: Record<string, string> = {}): Promise<WebAnswer> {
  const r = await fetch(`${t.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/grpc-web+proto", ...headers },
    body: new Uint8Array(body),
  });
  const bytes = Buffer.from(await r.arrayBuffer());
  const flags: number[] = [];
  let message: Buffer | undefined;
  const trailer: Record<string, string> = {};
  for (let at = 0; at + 5 <= bytes.length; ) {
    const length = bytes.readUInt32BE(at + 1);
    const data = bytes.subarray(at + 5, at + 5 + length);
    flags.push(bytes[at]!);
    if (bytes[at] === 0x80) {
      for (const line of data.toString("utf8").split("\r\n").filter(Boolean)) {
        const i = line.indexOf(":");
        trailer[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
    } else message = data;
    at += 5 + length;
  }
  return { status: r.status, contentType: r.headers.get("content-type"), flags, message, trailer };
}

async function bothWaysWeb<D extends DescMessage>(path: string, schema: D, init: MessageInitShape<D>, headers: Record<string, string> = {}) {
  const bytes = toBinary(schema, create(schema, init));
  const plain = await grpcWebRaw(path, frame(bytes), headers);
  const compressed = await grpcWebRaw(path, frame(gzipSync(bytes), 1), { ...headers, "grpc-encoding": "gzip" });
  return { plain, compressed };
}

describe("unary gRPC through the Connect unary path", () => {
  const auth = () => ({ authorization: `Bearer ${t.adminPat}` });

  it("answers a successful call as connect-es's gRPC path does: one message frame, then grpc-status 0 in the trailers", async () => {
    const { plain, compressed } = await bothWays(`${LANGUAGES}/ResolveLanguages`, ResolveLanguageSettingsRequestSchema, {}, auth());
    expect(plain.grpcStatus).toBe("0");
    expect(plain.statusIn).toBe("trailers");
    expect(plain.contentType).toBe(compressed.contentType);
    expect(plain.contentType).toBe("application/grpc+proto");
    // The plain answer is not compressed: a frame with flag 0 and its length.
    expect(plain.body[0]).toBe(0);
    expect(plain.body.readUInt32BE(1)).toBe(plain.body.length - 5);
    expect(plain.body.length).toBeGreaterThan(5);
  });

  it("answers errors with the same code and message", async () => {
    const cases = [
      await bothWays(`${LANGUAGES}/SetLanguages`, SetLanguageSettingsRequestSchema, { settings: { defaultLanguage: { key: "no such language" } } }, auth()),
      await bothWays(`${TARGETS}/GetTarget`, GetTargetRequestSchema, { id: "424242" }, auth()),
      await bothWays(`${LANGUAGES}/ResolveLanguages`, ResolveLanguageSettingsRequestSchema, {}),
      await bothWays(`${LANGUAGES}/ResolveLanguages`, ResolveLanguageSettingsRequestSchema, {}, { authorization: "Bearer not-a-token" }),
    ];
    expect(cases.map((c) => Number(c.plain.grpcStatus))).toEqual([Code.InvalidArgument, Code.NotFound, Code.Unauthenticated, Code.Unauthenticated]);
    for (const { plain, compressed } of cases) {
      expect(plain.status).toBe(200);
      expect(plain.grpcStatus).toBe(compressed.grpcStatus);
      expect(plain.grpcMessage).toBe(compressed.grpcMessage);
      expect(plain.body.length).toBe(0);
    }
    expect(cases[0]!.plain.grpcMessage).toContain("default_language");
  });

  it("serves a timeout too long for the Connect header, and refuses one that is malformed, as connect-es's gRPC path does", async () => {
    const path = `${LANGUAGES}/ResolveLanguages`;
    const long = await bothWays(path, ResolveLanguageSettingsRequestSchema, {}, { ...auth(), "grpc-timeout": "99999999H" });
    expect([long.plain.grpcStatus, long.compressed.grpcStatus]).toEqual(["0", "0"]);
    const bad = await bothWays(path, ResolveLanguageSettingsRequestSchema, {}, { ...auth(), "grpc-timeout": "soon" });
    expect(bad.plain.grpcStatus).toBe(bad.compressed.grpcStatus);
    expect(bad.plain.grpcMessage).toBe(bad.compressed.grpcMessage);
    expect(Number(bad.plain.grpcStatus)).not.toBe(0);
  });

  it("answers gRPC-web calls as connect-es's gRPC-web path does: message frame, then the trailer frame", async () => {
    const ok = await bothWaysWeb(`${LANGUAGES}/ResolveLanguages`, ResolveLanguageSettingsRequestSchema, {}, auth());
    expect(ok.plain.flags).toEqual([0, 0x80]);
    expect(ok.plain.trailer["grpc-status"]).toBe("0");
    expect(ok.plain.contentType).toBe(ok.compressed.contentType);
    expect(ok.plain.message!.length).toBeGreaterThan(0);
    const failures = [
      await bothWaysWeb(`${LANGUAGES}/SetLanguages`, SetLanguageSettingsRequestSchema, { settings: { defaultLanguage: { key: "no such language" } } }, auth()),
      await bothWaysWeb(`${TARGETS}/GetTarget`, GetTargetRequestSchema, { id: "424242" }, auth()),
      await bothWaysWeb(`${LANGUAGES}/ResolveLanguages`, ResolveLanguageSettingsRequestSchema, {}),
    ];
    expect(failures.map((c) => Number(c.plain.trailer["grpc-status"]))).toEqual([Code.InvalidArgument, Code.NotFound, Code.Unauthenticated]);
    for (const { plain, compressed } of failures) {
      expect(plain.status).toBe(200);
      expect(plain.flags).toEqual([0x80]);
      expect(plain.trailer["grpc-status"]).toBe(compressed.trailer["grpc-status"]);
      expect(decodeURIComponent(plain.trailer["grpc-message"]!)).toBe(decodeURIComponent(compressed.trailer["grpc-message"]!));
    }
  });

  it("survives a client that resets the stream in the middle of its request body", async () => {
    const session = http2.connect(t.url);
    const req = session.request({ ":method": "POST", ":path": `${LANGUAGES}/ResolveLanguages`, "content-type": "application/grpc", te: "trailers", ...auth() });
    req.on("error", () => {});
    req.write(Buffer.from([0, 0, 0, 0, 9, 1, 2]));
    await new Promise((r) => setTimeout(r, 50));
    req.close(http2.constants.NGHTTP2_CANCEL);
    await new Promise((r) => req.on("close", r));
    session.close();
    const { plain } = await bothWays(`${LANGUAGES}/ResolveLanguages`, ResolveLanguageSettingsRequestSchema, {}, auth());
    expect(plain.grpcStatus).toBe("0");
  });

  it("hands plain calls to the handler as Connect unary requests, and every other call as it came", async () => {
    const router = createConnectRouter();
    const seen: string[] = [];
    const timeouts: (string | null)[] = [];
    router.service(serviceDescriptors.health, { check: () => ({ status: 1 }) } as never);
    const inner = router.handlers[0]!;
    router.handlers[0] = Object.assign((req: UniversalServerRequest) => {
      seen.push(req.header.get("content-type")!);
      timeouts.push(req.header.get("connect-timeout-ms"));
      return inner(req);
    }, inner);
    serveUnaryGrpcAsConnect(router, 1024, { error: () => {} });
    const handler = router.handlers[0]!;
    const message = toBinary(HealthCheckRequestSchema, create(HealthCheckRequestSchema, {}));
    const request = (body: Uint8Array, header: Record<string, string> = {}) => ({
      httpVersion: "2.0",
      method: "POST",
      url: `http://localhost${handler.requestPath}`,
      header: new Headers({ "content-type": "application/grpc", te: "trailers", ...header }),
      body: createAsyncIterable([body]),
      signal: new AbortController().signal,
      contextValues: undefined,
    });
    const res = await handler(request(frame(message), { "grpc-timeout": "1500m" }) as never);
    expect(seen).toEqual(["application/proto"]);
    // The deadline goes along in the Connect header.
    expect(timeouts).toEqual(["1500"]);
    expect(new Headers(res.trailer).get("grpc-status")).toBe("0");
    expect(Buffer.from(await readAllBytes(res.body as AsyncIterable<Uint8Array>, 1 << 20))).toEqual(frame(Buffer.from([0x08, 0x01])));
    const web = await handler({ ...request(frame(message)), header: new Headers({ "content-type": "application/grpc-web+proto" }) } as never);
    expect(seen[1]).toBe("application/proto");
    expect(new Headers(web.header).get("content-type")).toBe("application/grpc-web+proto");
    seen.splice(1, 1);
    // A body that breaks off while it is read: answered with ABORTED in the protocol, never a rejected call.
    async function* broken() {
      yield frame(message).subarray(0, 3);
      throw new Error("stream reset");
    }
    const cut = await handler({ ...request(frame(message)), body: broken() } as never);
    expect(new Headers(cut.trailer).get("grpc-status")).toBe(String(Code.Aborted));
    expect(seen).toHaveLength(1);
    // Compressed, two frames, over the limit: each goes on unchanged to connect-es's gRPC path.
    await handler(request(frame(gzipSync(message), 1), { "grpc-encoding": "gzip" }) as never);
    await handler(request(Buffer.concat([frame(message), frame(message)])) as never);
    await handler(request(frame(Buffer.alloc(2048))) as never);
    expect(seen.slice(1)).toEqual(["application/grpc", "application/grpc", "application/grpc"]);
  });
});
