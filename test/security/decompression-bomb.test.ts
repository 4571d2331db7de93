import http2 from "node:http2";
import zlib from "node:zlib";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * Security review #2: a compressed request body was inflated up to 4 GiB before authentication (a 405-byte
 * request raised the server's memory by 750 MiB). Here anonymous requests whose bodies inflate to 256 MiB,
 * in every framing the Connect plugin serves and both compressions it accepts, must be refused at once with
 * a client error, and the memory of the server (in this process) must not follow the inflated size.
 */

let t: TestServer;
const MiB = 2 ** 20;
const INFLATED = 256 * MiB;

/** 256 MiB of zeros in 203 bytes of brotli, compressed as a stream (no 256 MiB buffer in this process). */
function brotliBomb(): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    const br = zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5, [zlib.constants.BROTLI_PARAM_LGWIN]: 24 } });
    br.on("data", (c: Buffer) => out.push(c));
    br.on("end", () => resolve(Buffer.concat(out)));
    br.on("error", reject);
    const zeros = Buffer.alloc(MiB);
    for (let i = 0; i < INFLATED / MiB; i++) br.write(zeros);
    br.end();
  });
}

/** 256 MiB of zeros as 16 concatenated gzip members of 16 MiB each (gunzip reads them all): 255 KiB. */
function gzipBomb(): Buffer {
  const member = zlib.gzipSync(Buffer.alloc(16 * MiB), { level: 9 });
  return Buffer.concat(Array.from({ length: INFLATED / (16 * MiB) }, () => member));
}

/** One length-prefixed message (gRPC, gRPC-web, Connect streaming): flags, 4-byte length, data. */
function frame(data: Uint8Array, flags: number): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(data.length, 1);
  return Buffer.concat([head, data]);
}

const RESOLVE_LANGUAGES = "/svc.settings.language.v3alpha.LanguageSettingsService/ResolveLanguages";
/** Server streaming: connect-es reads its one request message before any interceptor, as for unary methods. */
const HEALTH_WATCH = "/grpc.health.v1.Health/Watch";

interface Refusal {
  /** The HTTP status. */
  status: number;
  /** The RPC's code: from the Connect error body, the end-of-stream message or the grpc-status. */
  code: Code;
}

const connectCodes: Record<string, Code> = { resource_exhausted: Code.ResourceExhausted, invalid_argument: Code.InvalidArgument };

/** A Connect unary call (HTTP/1.1) with the compressed body. */
async function connectUnary(body: Buffer, encoding: string): Promise<Refusal> {
  const r = await fetch(`${t.url}${RESOLVE_LANGUAGES}`, {
    method: "POST",
    headers: { "content-type": "application/proto", "content-encoding": encoding, "connect-protocol-version": "1" },
    body: new Uint8Array(body),
  });
  const json = (await r.json()) as { code: string };
  return { status: r.status, code: connectCodes[json.code] ?? Code.Unknown };
}

/** A Connect streaming call (HTTP/1.1): one compressed message frame; the error is in the end-of-stream frame. */
async function connectStream(body: Buffer, encoding: string): Promise<Refusal> {
  const r = await fetch(`${t.url}${HEALTH_WATCH}`, {
    method: "POST",
    headers: { "content-type": "application/connect+proto", "connect-content-encoding": encoding, "connect-protocol-version": "1" },
    body: new Uint8Array(frame(body, 1)),
  });
  const bytes = Buffer.from(await r.arrayBuffer());
  const end = /\{.*\}/s.exec(bytes.toString("latin1"))?.[0] ?? "{}";
  const error = (JSON.parse(end) as { error?: { code: string } }).error;
  return { status: r.status, code: error ? (connectCodes[error.code] ?? Code.Unknown) : Code.Unknown };
}

/** A gRPC call over HTTP/2 (prior knowledge): one compressed message frame; the code is the grpc-status trailer. */
function grpc(body: Buffer, encoding: string): Promise<Refusal> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(t.url);
    session.on("error", reject);
    const req = session.request({
      ":method": "POST",
      ":path": RESOLVE_LANGUAGES,
      "content-type": "application/grpc",
      te: "trailers",
      "grpc-encoding": encoding,
    });
    let headers: http2.IncomingHttpHeaders = {};
    req.on("response", (h) => (headers = h));
    req.on("trailers", (h) => (headers = { ...headers, ...h }));
    req.on("data", () => {});
    req.on("close", () => {
      session.close();
      resolve({ status: Number(headers[":status"]), code: Number(headers["grpc-status"] ?? Code.Unknown) });
    });
    req.end(frame(body, 1));
  });
}

/** A gRPC-web call over HTTP/1.1: the code is in the trailer frame at the end of the body. */
async function grpcWeb(body: Buffer, encoding: string): Promise<Refusal> {
  const r = await fetch(`${t.url}${RESOLVE_LANGUAGES}`, {
    method: "POST",
    headers: { "content-type": "application/grpc-web+proto", "grpc-encoding": encoding },
    body: new Uint8Array(frame(body, 1)),
  });
  const text = r.headers.get("grpc-status") ? `grpc-status:${r.headers.get("grpc-status")}` : Buffer.from(await r.arrayBuffer()).toString("latin1");
  return { status: r.status, code: Number(/grpc-status: ?(\d+)/.exec(text)?.[1] ?? Code.Unknown) };
}

/** The largest growth of RSS and of the ArrayBuffers' memory above `before` while `run` runs (sampled every 5 ms). */
async function peakGrowth<T>(run: () => Promise<T>): Promise<{ result: T; rss: number; arrayBuffers: number }> {
  const before = process.memoryUsage();
  let rss = 0;
  let arrayBuffers = 0;
  const sample = () => {
    const now = process.memoryUsage();
    rss = Math.max(rss, now.rss - before.rss);
    arrayBuffers = Math.max(arrayBuffers, now.arrayBuffers - before.arrayBuffers);
  };
  const timer = setInterval(sample, 5);
  try {
    const result = await run();
    sample();
    return { result, rss, arrayBuffers };
  } finally {
    clearInterval(timer);
  }
}

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

describe("compressed request bodies are inflated no further than the read limit (review #2)", () => {
  it("refuses bombs in every framing and compression quickly, without the server's memory following the inflated size", async () => {
    const bombs = { br: await brotliBomb(), gzip: gzipBomb() };
    expect(bombs.br.length).toBeLessThan(1024);
    const framings = { "Connect unary": connectUnary, "Connect streaming": connectStream, gRPC: grpc, "gRPC-web": grpcWeb };
    // A first call of each kind (a message that does not decode, so that Watch does not stay open), so that what the
    // server keeps after its first requests is not counted.
    for (const call of Object.values(framings)) await call(zlib.gzipSync(Buffer.from([0xff])), "gzip");
    // Each request's growth above the memory before it: freed buffers are collected whenever V8 chooses, so growth
    // summed over requests would count the garbage of earlier ones. Without the bound, each request holds 256 MiB.
    for (const [framing, call] of Object.entries(framings)) {
      for (const [encoding, body] of Object.entries(bombs)) {
        const name = `${framing} ${encoding}`;
        const started = performance.now();
        const { result, rss, arrayBuffers } = await peakGrowth(() => call(body, encoding));
        const ms = performance.now() - started;
        expect(rss, `${name}: RSS grew by ${Math.round(rss / MiB)} MiB`).toBeLessThan(64 * MiB);
        expect(arrayBuffers, `${name}: ArrayBuffers grew by ${Math.round(arrayBuffers / MiB)} MiB`).toBeLessThan(64 * MiB);
        expect(result.status, name).toBeGreaterThanOrEqual(200);
        expect(result.status, name).toBeLessThan(500);
        expect([Code.ResourceExhausted, Code.InvalidArgument], `${name}: code ${result.code}`).toContain(result.code);
        // Milliseconds when idle; the margin is for a busy machine (the inflation it replaces took seconds).
        expect(ms, name).toBeLessThan(5000);
      }
    }
    // The server still answers.
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
  });
});
