import http2 from "node:http2";
import net from "node:net";
import { gzipSync } from "node:zlib";
import { create, fromJson, toBinary, type JsonValue } from "@bufbuild/protobuf";
import { ListValueSchema, StructSchema } from "@bufbuild/protobuf/wkt";
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ActionService, CreateTargetRequestSchema } from "../../gen/svc/resources/action/v3alpha/action_service_pb.js";
import { CreateApplicationRequestSchema } from "../../gen/svc/resources/application/v3alpha/application_service_pb.js";
import {
  LanguageSettingsService,
  ResolveLanguageSettingsRequestSchema,
  SetLanguageSettingsRequestSchema,
} from "../../gen/svc/settings/language/v3alpha/language_service_pb.js";
import { checkJson } from "../../src/server/decoding.js";
import type { DualProtocolServer } from "../../src/server/listener.js";
import { violation } from "../../src/validation/validate.js";
import { call, expectCode, protocols, rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

// Bad input is never a 5xx (contract, "Durability and start-up"): NUL bytes, malformed protobuf and JSON,
// oversized headers. Each case is sent over a real socket, and the server must answer the next request.
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

const SET_LANGUAGES = "/svc.settings.language.v3alpha.LanguageSettingsService/SetLanguages";
const CREATE_TARGET = "/svc.resources.action.v3alpha.ActionService/CreateTarget";
const auth = () => ({ authorization: `Bearer ${t.adminPat}` });

async function stillServes() {
  expect((await rest(t.url, "GET", "/settings/v3alpha/languages", { token: t.adminPat })).status).toBe(200);
  const resolve = LanguageSettingsService.method.resolveLanguages;
  await call("grpc", t.url, LanguageSettingsService, resolve, create(resolve.input, {}), { token: t.adminPat });
}

/** One gRPC length-prefixed message: flags, 4-byte length, data. */
function frame(data: Uint8Array, flags = 0): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(data.length, 1);
  return Buffer.concat([head, data]);
}

/** A raw gRPC call over HTTP/2: grpc-status and grpc-message of the answer. `split`: one DATA frame per byte. */
function grpcRaw(path: string, body: Buffer, headers: Record<string, string> = {}, split = false): Promise<{ code: number; message: string }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(t.url);
    session.on("error", reject);
    const req = session.request({ ":method": "POST", ":path": path, "content-type": "application/grpc", te: "trailers", ...auth(), ...headers });
    let status: http2.IncomingHttpHeaders = {};
    req.on("response", (h) => (status = h));
    req.on("trailers", (h) => (status = { ...status, ...h }));
    req.on("data", () => {});
    req.on("close", () => {
      session.close();
      resolve({ code: Number(status["grpc-status"]), message: decodeURIComponent(String(status["grpc-message"] ?? "")) });
    });
    if (split) for (const byte of body) req.write(Buffer.from([byte]));
    req.end(split ? undefined : body);
  });
}

/** A raw gRPC-web call over HTTP/1.1: the status from the trailer frame at the end of the body. */
async function grpcWebRaw(path: string, body: Buffer, headers: Record<string, string> = {}): Promise<{ code: number; message: string }> {
  const r = await fetch(`${t.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/grpc-web+proto", ...auth(), ...headers },
    body: new Uint8Array(body),
  });
  const bytes = Buffer.from(await r.arrayBuffer());
  const text = r.headers.get("grpc-status")
    ? `grpc-status: ${r.headers.get("grpc-status")}\r\ngrpc-message: ${r.headers.get("grpc-message")}`
    : bytes.toString("latin1");
  return { code: Number(/grpc-status: ?(\d+)/.exec(text)?.[1]), message: decodeURIComponent(/grpc-message: ?([^\r\n]*)/.exec(text)?.[1] ?? "") };
}

/** A Connect unary call with a raw body. */
async function connectRaw(path: string, body: string | Buffer, contentType: string) {
  const r = await fetch(`${t.url}${path}`, {
    method: "POST",
    headers: { "content-type": contentType, "connect-protocol-version": "1", ...auth() },
    body: typeof body === "string" ? body : new Uint8Array(body),
  });
  return { status: r.status, body: (await r.json()) as { code: string; message: string } };
}

/** Everything the server sends on a raw connection until it closes it (or `waitMs` passes). */
function rawExchange(bytes: Buffer | string, waitMs = 5_000): Promise<{ data: Buffer; closed: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(t.port, "127.0.0.1", () => socket.write(bytes));
    const done = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ data: Buffer.concat(chunks), closed });
    };
    const timer = setTimeout(() => done(false), waitMs);
    socket.on("data", (d) => chunks.push(d));
    socket.on("error", () => {});
    socket.on("close", () => done(true));
  });
}

describe("NUL characters", () => {
  it("are INVALID_ARGUMENT naming the field over REST: path IDs and body fields, nested and repeated", async () => {
    const cases: [string, string, unknown, string][] = [
      ["GET", "/resources/v3alpha/targets/ab%00c", undefined, "invalid id: must not contain NUL characters"],
      [
        "POST",
        "/resources/v3alpha/targets",
        { name: "a\u0000b", restWebhook: { url: "https://x.example" }, timeout: "10s" },
        "invalid target.name: must not contain NUL characters",
      ],
      ["POST", "/resources/v3alpha/organizations", { name: "acme\u0000" }, "invalid organization.name: must not contain NUL"],
      ["POST", "/resources/v3alpha/users", { username: "a\u0000b", machine: {} }, "invalid user.username: must not contain NUL"],
      ["POST", "/resources/v3alpha/projects/p1/roles/_search", { keyPrefix: "ro\u0000" }, "invalid key_prefix: must not contain NUL"],
      [
        "POST",
        "/resources/v3alpha/projects/p1/applications",
        { name: "app", oidc: { redirectUris: ["https://a.example/cb", "https://b.example/\u0000"] } },
        "invalid application.oidc.redirect_uris[1]: must not contain NUL",
      ],
      ["GET", "/settings/v3alpha/languages?ctx.org_id=1%00", undefined, "invalid ctx.org_id: must not contain NUL"],
    ];
    for (const [method, path, body, message] of cases) {
      const r = await rest(t.url, method, path, { token: t.adminPat, body });
      expect(r.status, path).toBe(400);
      expect(r.body.code, path).toBe(Code.InvalidArgument);
      expect(r.body.message, path).toContain(message);
    }
    await stillServes();
  });

  it.each(protocols)("are INVALID_ARGUMENT naming the field over %s", async (protocol) => {
    const req = create(CreateTargetRequestSchema, {
      target: { name: "tar\u0000get", targetType: { case: "restWebhook", value: { url: "https://x.example" } }, timeout: { seconds: 1n } },
    });
    const err = await expectCode(call(protocol, t.url, ActionService, ActionService.method.createTarget, req, { token: t.adminPat }), Code.InvalidArgument);
    // grpc-js leaves the percent-encoding of grpc-message partly in place (":" stays "%3A").
    expect(decodeURIComponent(err.rawMessage)).toContain("invalid target.name: must not contain NUL characters");
    await stillServes();
  });

  it("are found in map keys and values and in lists (the checks are compiled for every message type)", () => {
    const struct = (json: JsonValue) => violation(StructSchema, fromJson(StructSchema, json));
    expect(struct({ "a\u0000": 1 })).toBe("fields: keys must not contain NUL characters");
    expect(struct({ a: { b: "x\u0000" } })).toBe("fields[a].struct_value.fields[b].string_value: must not contain NUL characters");
    expect(violation(ListValueSchema, fromJson(ListValueSchema, ["ok", "n\u0000"]))).toBe("values[1].string_value: must not contain NUL characters");
    expect(struct({ a: "fine", b: ["also fine"] })).toBeUndefined();
  });
});

describe("malformed protobuf", () => {
  const garbage: [string, Buffer, Record<string, string>?][] = [
    ["bytes that are no message", frame(Buffer.from([0xff, 0xff, 0xff]))],
    ["a length beyond the end", frame(Buffer.from([0x0a, 0x05, 0x01]))],
    ["a truncated varint", frame(Buffer.from([0x08]))],
    ["a group that never ends", frame(Buffer.from([0x0b]))],
    ["field number 0", frame(Buffer.from([0x00, 0x00]))],
    ["invalid UTF-8 in a string (ctx.instance_id)", frame(Buffer.from([0x0a, 0x04, 0x12, 0x02, 0xc3, 0x28]))],
    ["a truncated frame", frame(Buffer.from([1, 2, 3])).subarray(0, 6)],
    ["a compressed frame without grpc-encoding", frame(Buffer.from([0x0a, 0x00]), 1)],
    ["a compressed frame that is no gzip", frame(Buffer.from([1, 2, 3]), 1), { "grpc-encoding": "gzip" }],
    ["a truncated gzip stream", frame(gzipSync(Buffer.from([0x0a, 0x00])).subarray(0, 8), 1), { "grpc-encoding": "gzip" }],
    ["gzip of a malformed message", frame(gzipSync(Buffer.from([0xff, 0xff])), 1), { "grpc-encoding": "gzip" }],
    ["no message at all", Buffer.alloc(0)],
    ["two messages for a unary method", Buffer.concat([frame(Buffer.alloc(0)), frame(Buffer.alloc(0))])],
    ["a trailer frame", frame(Buffer.alloc(0), 0x80)],
  ];

  it("is INVALID_ARGUMENT over gRPC (HTTP/2)", async () => {
    for (const [name, body, headers] of garbage) {
      const r = await grpcRaw(SET_LANGUAGES, body, headers);
      expect(r.code, `${name}: ${r.message}`).toBe(Code.InvalidArgument);
    }
    expect((await grpcRaw(SET_LANGUAGES, garbage[0]![1])).message).toContain("not a valid svc.settings.language.v3alpha.SetLanguageSettingsRequest");
    // Frames arriving a byte at a time are checked once complete: the garbage is refused, a valid call served.
    expect((await grpcRaw(SET_LANGUAGES, garbage[0]![1], {}, true)).code).toBe(Code.InvalidArgument);
    const resolve = frame(toBinary(ResolveLanguageSettingsRequestSchema, create(ResolveLanguageSettingsRequestSchema, {})));
    expect((await grpcRaw("/svc.settings.language.v3alpha.LanguageSettingsService/ResolveLanguages", resolve, {}, true)).code).toBe(0);
    await stillServes();
  });

  it("is INVALID_ARGUMENT over gRPC-web (HTTP/1.1)", async () => {
    for (const [name, body, headers] of garbage) {
      const r = await grpcWebRaw(SET_LANGUAGES, body, headers);
      expect(r.code, `${name}: ${r.message}`).toBe(Code.InvalidArgument);
    }
    await stillServes();
  });

  it("is HTTP 400 invalid_argument over Connect (application/proto), HTTP/1.1 and HTTP/2", async () => {
    for (const [name, body] of garbage.slice(0, 6)) {
      const r = await connectRaw(SET_LANGUAGES, body.subarray(5), "application/proto");
      expect([r.status, r.body.code], name).toEqual([400, "invalid_argument"]);
    }
    const gz = await fetch(`${t.url}${SET_LANGUAGES}`, {
      method: "POST",
      headers: { "content-type": "application/proto", "content-encoding": "gzip", "connect-protocol-version": "1", ...auth() },
      body: new Uint8Array(gzipSync(Buffer.from([0xff])).subarray(0, 6)),
    });
    expect(gz.status).toBe(400);
    // HTTP/2 (the Connect client in binary format, with a message that cannot be encoded validly).
    const h2 = await new Promise<number>((resolve) => {
      const s = http2.connect(t.url);
      const r = s.request({ ":method": "POST", ":path": SET_LANGUAGES, "content-type": "application/proto", "connect-protocol-version": "1", ...auth() });
      r.on("response", (h) => resolve(Number(h[":status"])));
      r.on("data", () => {});
      r.on("close", () => s.close());
      r.end(Buffer.from([0x0a, 0x05, 0x01]));
    });
    expect(h2).toBe(400);
    await stillServes();
  });
});

describe("Connect JSON is as strict as REST", () => {
  const appWithTypo = { projectId: "p1", application: { name: "a", oidc: { authMethodType: "OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JTW" } } };

  it("refuses unknown fields and unknown enum names, naming the field, over Connect JSON and REST", async () => {
    const unknown = await connectRaw(SET_LANGUAGES, JSON.stringify({ settings: { defaultLanguagX: { key: "de" } } }), "application/json");
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toContain("invalid settings.defaultLanguagX: unknown field");
    const typo = await connectRaw("/svc.resources.application.v3alpha.ApplicationService/CreateApplication", JSON.stringify(appWithTypo), "application/json");
    expect(typo.status).toBe(400);
    expect(typo.body.message).toContain('invalid application.oidc.auth_method_type: "OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JTW" is not a value of');
    const viaRest = await rest(t.url, "POST", "/resources/v3alpha/projects/p1/applications", { token: t.adminPat, body: appWithTypo.application });
    expect([viaRest.status, viaRest.body.code]).toEqual([400, Code.InvalidArgument]);
    expect(viaRest.body.message).toContain("invalid application.oidc.auth_method_type");
    await stillServes();
  });

  it("refuses them over gRPC and gRPC-web with the JSON codec too", async () => {
    const body = frame(Buffer.from(JSON.stringify({ settings: { defaultLanguagX: {} } })));
    const viaGrpc = await grpcRaw(SET_LANGUAGES, body, { "content-type": "application/grpc+json" });
    expect([viaGrpc.code, viaGrpc.message]).toEqual([Code.InvalidArgument, expect.stringContaining("settings.defaultLanguagX: unknown field")]);
    const viaWeb = await grpcWebRaw(SET_LANGUAGES, body, { "content-type": "application/grpc-web+json" });
    expect([viaWeb.code, viaWeb.message]).toEqual([Code.InvalidArgument, expect.stringContaining("settings.defaultLanguagX: unknown field")]);
    await stillServes();
  });
});

describe("type errors name the field", () => {
  const cases: [string, unknown, string, string][] = [
    [CREATE_TARGET, { target: { name: 5 } }, "/resources/v3alpha/targets", "invalid target.name: expected string, got 5"],
    [
      CREATE_TARGET,
      { target: { name: "t", timeout: "abc" } },
      "/resources/v3alpha/targets",
      'invalid target.timeout: not a valid google.protobuf.Duration: "abc"',
    ],
    [
      SET_LANGUAGES,
      { settings: { defaultLanguage: { key: 7 } } },
      "/settings/v3alpha/languages",
      "invalid settings.default_language.key: expected string, got 7",
    ],
    [
      SET_LANGUAGES,
      { settings: { defaultLanguage: 7 } },
      "/settings/v3alpha/languages",
      "invalid settings.default_language: not a valid svc.settings.object.v3alpha.Language",
    ],
    [
      SET_LANGUAGES,
      { settings: { restrictedLanguages: { languages: [{ key: "de" }, { key: [] }] } } },
      "/settings/v3alpha/languages",
      "invalid settings.restricted_languages.languages[1].key",
    ],
    [
      CREATE_TARGET,
      { target: { name: "t", isAsync: true, interruptOnError: true } },
      "/resources/v3alpha/targets",
      "invalid target.execution_type: set multiple times by is_async and interrupt_on_error",
    ],
  ];

  it("over Connect JSON and REST (the REST body is the request's body field)", async () => {
    for (const [rpc, json, path, message] of cases) {
      const connect = await connectRaw(rpc, JSON.stringify(json), "application/json");
      expect([connect.status, connect.body.code], message).toEqual([400, "invalid_argument"]);
      expect(connect.body.message).toContain(message);
      const body = Object.values(json as Record<string, unknown>)[0];
      const r = await rest(t.url, path === "/resources/v3alpha/targets" ? "POST" : "PATCH", path, { token: t.adminPat, body });
      expect([r.status, r.body.code], message).toEqual([400, Code.InvalidArgument]);
      expect(r.body.message).toContain(message);
    }
    await stillServes();
  });

  it("are located without a server, as deep as the JSON goes", () => {
    const message = (desc: Parameters<typeof checkJson>[0], json: JsonValue) => {
      try {
        checkJson(desc, json);
        return "ok";
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(message(SetLanguageSettingsRequestSchema, { settings: { default_language: { key: "de" } } })).toBe("ok");
    expect(message(CreateApplicationRequestSchema, { application: { oidc: { grantTypes: ["OIDC_GRANT_TYPE_AUTHORIZATION_CODE", "NOPE"] } } })).toContain(
      'invalid application.oidc.grant_types[1]: "NOPE" is not a value of svc.resources.application.v3alpha.OIDCGrantType',
    );
    expect(message(SetLanguageSettingsRequestSchema, [1, 2])).toContain("invalid request:");
  });
});

describe("oversized headers", () => {
  const big = "a".repeat(20 * 1024);

  it("are 431 over HTTP/1.1, and a request the parser refuses otherwise is 400; the connection closes", async () => {
    const r = await rawExchange(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${big}\r\n\r\n`);
    expect(r.data.toString()).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    expect(r.closed).toBe(true);
    const garbled = await rawExchange("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header\r\n\r\n");
    expect(garbled.data.toString()).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(garbled.closed).toBe(true);
    await stillServes();
  });

  it("are refused over HTTP/2: 431, or RST_STREAM once the client knows the limit; the session stays usable", async () => {
    const session = http2.connect(t.url);
    const status = (headers: http2.OutgoingHttpHeaders) =>
      new Promise<number>((resolve, reject) => {
        const r = session.request({ ":path": "/healthz", ...headers });
        r.on("response", (h) => resolve(Number(h[":status"])));
        r.on("error", reject);
        r.on("data", () => {});
        r.end();
      });
    // Sent with the preface, before the server's SETTINGS (which the server sends only once it sees the preface).
    expect(await status({ "x-big-1": big.slice(0, 9000), "x-big-2": big.slice(0, 9000) })).toBe(431);
    expect(await status({})).toBe(200);
    // Now SETTINGS_MAX_HEADER_LIST_SIZE is acknowledged, and Node enforces it itself.
    await expect(status({ "x-big": big })).rejects.toThrow(/ENHANCE_YOUR_CALM/);
    expect(await status({})).toBe(200);
    session.close();
    // gRPC clients see a refusal, not a failure of the server.
    const client = new grpc.Client(`127.0.0.1:${t.port}`, grpc.credentials.createInsecure());
    const md = new grpc.Metadata();
    md.set("x-big", big);
    const code = await new Promise<number | undefined>((resolve) =>
      client.makeUnaryRequest(
        "/grpc.health.v1.Health/Check",
        (x: Buffer) => x,
        (b: Buffer) => b,
        Buffer.alloc(0),
        md,
        (err) => resolve(err?.code),
      ),
    );
    client.close();
    expect(code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    await stillServes();
  });

  it("a header field beyond HPACK's 64 KiB is GOAWAY (COMPRESSION_ERROR), and the dead session is closed when idle", async () => {
    const h2 = (t.server.app.server as unknown as DualProtocolServer).h2;
    h2.setTimeout(300);
    try {
      // Literal header fields without indexing (RFC 7541 §6.2.2), in a HEADERS frame and CONTINUATION frames.
      const int7 = (n: number) =>
        n < 127
          ? [n]
          : [
              127,
              ...(function* (m) {
                for (; m >= 128; m >>= 7) yield (m & 127) | 128;
                yield m;
              })(n - 127),
            ];
      const field = (name: string, value: string) =>
        Buffer.concat([Buffer.from([0, ...int7(name.length)]), Buffer.from(name), Buffer.from(int7(value.length)), Buffer.from(value)]);
      const block = Buffer.concat([
        field(":method", "GET"),
        field(":scheme", "http"),
        field(":path", "/healthz"),
        field(":authority", "x"),
        field("x-big", "a".repeat(70_000)),
      ]);
      const h2frame = (type: number, flags: number, payload: Buffer) =>
        Buffer.concat([Buffer.from([0, payload.length >> 8, payload.length & 255, type, flags, 0, 0, 0, type === 4 ? 0 : 1]), payload]);
      const frames = [];
      for (let off = 0; off < block.length; off += 16_384) {
        const last = off + 16_384 >= block.length;
        frames.push(h2frame(off === 0 ? 1 : 9, (last ? 4 : 0) | (off === 0 ? 1 : 0), block.subarray(off, off + 16_384)));
      }
      const r = await rawExchange(Buffer.concat([Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), h2frame(4, 0, Buffer.alloc(0)), ...frames]));
      const received: [number, Buffer][] = [];
      for (let off = 0; off + 9 <= r.data.length; off += 9 + r.data.readUIntBE(off, 3)) {
        received.push([r.data[off + 3]!, r.data.subarray(off + 9, off + 9 + r.data.readUIntBE(off, 3))]);
      }
      const goaway = received.find(([type]) => type === 7)?.[1];
      expect(goaway?.readUInt32BE(4)).toBe(http2.constants.NGHTTP2_COMPRESSION_ERROR);
      expect(received.some(([type]) => type === 1)).toBe(false);
      expect(r.closed).toBe(true);
    } finally {
      h2.setTimeout(65_000);
    }
    await stillServes();
  });
});

describe("NUL characters in OAuth parameters and login forms", () => {
  const form = { "content-type": "application/x-www-form-urlencoded" };

  it("are invalid_request (400) at the OAuth endpoints, invalid_client in Basic credentials", async () => {
    for (const [path, body, parameter] of [
      ["/oauth/v2/token", "grant_type=client_credentials&client_id=a%00b&client_secret=x", "client_id"],
      ["/oauth/v2/token", "grant_type=refresh_token&refresh_token=r%00", "refresh_token"],
      ["/oauth/v2/introspect", "token=a%00b", "token"],
      ["/oauth/v2/revoke", "token=a%00b", "token"],
      ["/oidc/v1/userinfo", "access_token=a%00b", "access_token"],
    ]) {
      const r = await rest(t.url, "POST", path!, { body, headers: form });
      expect([r.status, r.body.error], path).toEqual([400, "invalid_request"]);
      expect(r.body.error_description).toBe(`the parameter ${parameter} must not contain NUL characters`);
    }
    const basic = Buffer.from("a%00b:secret").toString("base64");
    const r = await rest(t.url, "POST", "/oauth/v2/token", { body: "grant_type=client_credentials", headers: { ...form, authorization: `Basic ${basic}` } });
    expect([r.status, r.body.error]).toEqual([401, "invalid_client"]);
    await stillServes();
  });

  it("are a 400 page at the browser endpoints and in the login UI's forms", async () => {
    for (const path of [
      "/oauth/v2/authorize?client_id=a%00b&redirect_uri=https://x.example&response_type=code&scope=openid",
      "/oauth/v2/authorize/callback?id=a%00b",
      "/oidc/v1/end_session?client_id=a%00&post_logout_redirect_uri=https://x.example",
      "/ui/login?login_hint=a%00",
    ]) {
      const r = await rest(t.url, "GET", path);
      expect(r.status, path).toBe(400);
      expect(r.headers["content-type"], path).toContain("text/html");
    }
    const page = await rest(t.url, "GET", "/ui/login");
    const csrfCookie = /svc_csrf=([^;]+)/.exec(String(page.headers["set-cookie"]))![1];
    const csrf = /name="csrf" value="([^"]+)"/.exec(String(page.body))![1]!;
    for (const [path, fields] of [
      ["/ui/login/loginname", "loginName=a%00b"],
      ["/ui/login/password", "loginName=admin&password=x%00"],
      ["/ui/login/register", "givenName=a%00&familyName=b&email=a@b.example&loginName=x&newPassword=Password1!&confirmPassword=Password1!"],
    ]) {
      const r = await rest(t.url, "POST", path!, {
        body: `csrf=${encodeURIComponent(csrf)}&${fields}`,
        headers: { ...form, cookie: `svc_csrf=${csrfCookie}` },
      });
      expect(r.status, path).toBe(400);
      expect(String(r.body), path).toContain("characters that are not allowed");
    }
    await stillServes();
  });
});

describe("a typed client still works after all of it", () => {
  it("creates a target over Connect in binary and JSON", async () => {
    for (const useBinaryFormat of [true, false]) {
      const client = createClient(
        ActionService,
        createConnectTransport({
          baseUrl: t.url,
          httpVersion: "1.1",
          useBinaryFormat,
          interceptors: [
            (next) => (req) => {
              req.header.set("authorization", `Bearer ${t.adminPat}`);
              return next(req);
            },
          ],
        }),
      );
      const res = await client.createTarget({
        target: { name: `fine-${useBinaryFormat}`, targetType: { case: "restWebhook", value: { url: "https://x.example" } }, timeout: { seconds: 1n } },
      });
      expect(res.details?.id).toBeTruthy();
    }
  });
});
