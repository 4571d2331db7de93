import { spawnSync } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LanguageSettingsService, ResolveLanguageSettingsRequestSchema } from "../../gen/svc/settings/language/v3alpha/language_service_pb.js";
import { ConfigError, loadConfig } from "../../src/config/config.js";
import { tracingFromEnv } from "../../src/config/otel.js";
import { projectRoot } from "../../src/storage/paths.js";
import { call, expectCode, rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

const svc = LanguageSettingsService;
const SERVICE = svc.typeName;
const resolve = svc.method.resolveLanguages;
const resolveReq = () => create(ResolveLanguageSettingsRequestSchema, {});

// The batch span processor exports every 100 ms instead of every 5 s (read by the SDK from the process's environment).
process.env.OTEL_BSP_SCHEDULE_DELAY = "100";

/** A local OTLP/HTTP receiver: keeps every export request it is sent. */
class OtlpReceiver {
  readonly received: { contentType: string; body: Buffer }[] = [];
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.url !== "/v1/traces" || req.method !== "POST") {
        res.writeHead(404).end();
        return;
      }
      const contentType = req.headers["content-type"] ?? "";
      this.received.push({ contentType, body: Buffer.concat(chunks) });
      // An empty ExportTraceServiceResponse: full success.
      if (contentType.includes("json")) res.writeHead(200, { "content-type": "application/json" }).end("{}");
      else res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }

  /** The spans of every JSON export so far, with their attributes as a plain object. */
  jsonSpans() {
    const out: { name: string; kind: number; traceId: string; parentSpanId?: string; attributes: Record<string, unknown>; status?: { code?: number } }[] = [];
    for (const r of this.received.filter((x) => x.contentType.includes("json"))) {
      const doc = JSON.parse(r.body.toString("utf8"));
      for (const rs of doc.resourceSpans ?? []) {
        const resource = Object.fromEntries((rs.resource?.attributes ?? []).map((a: any) => [a.key, Object.values(a.value)[0]]));
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            const attributes = Object.fromEntries((s.attributes ?? []).map((a: any) => [a.key, Object.values(a.value)[0]]));
            out.push({ ...s, attributes: { ...attributes, "resource.service.name": resource["service.name"] } });
          }
        }
      }
    }
    return out;
  }

  async waitFor<T>(find: () => T | undefined, what: string): Promise<T> {
    const end = Date.now() + 15_000;
    for (;;) {
      const found = find();
      if (found !== undefined) return found;
      if (Date.now() > end) throw new Error(`no ${what} within 15 s; received ${this.received.length} export(s)`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** The value of one series of the exposition text, e.g. `svc_rpc_requests_total{...}`; undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

const receiver = new OtlpReceiver();
let otlp: string;
beforeAll(async () => {
  otlp = await receiver.start();
});
afterAll(() => receiver.close());

describe("metrics on (the default) and traces as OTLP/JSON", () => {
  let t: TestServer;
  let metrics: () => Promise<string>;
  let machineSecret: string;
  /** The server's log lines (JSON), to find a request's trace ID in. */
  const logLines: Record<string, any>[] = [];

  beforeAll(async () => {
    t = await startTestServer(
      { OTEL_EXPORTER_OTLP_ENDPOINT: otlp, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", SVC_LOG_LEVEL: "info" },
      { logger: true, logStream: { write: (line) => logLines.push(JSON.parse(line)) } },
    );
    metrics = async () => {
      const r = await fetch(`${t.url}/metrics`);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
      return r.text();
    };
    const m = await rest(t.url, "POST", "/resources/v3alpha/users", { token: t.adminPat, body: { username: "robot", machine: { name: "Robot" } } });
    expect(m.status).toBe(201);
    machineSecret = (await rest(t.url, "POST", `/resources/v3alpha/users/${m.body.details.id}/_generate_secret`, { token: t.adminPat, body: {} })).body
      .clientSecret;
  });
  afterAll(() => t?.close());

  it("counts each RPC once, by service, method, protocol and code, REST included", async () => {
    const before = await metrics();
    const count = (text: string, protocol: string, code: string) =>
      sample(text, "svc_rpc_requests_total", { service: SERVICE, method: "ResolveLanguages", protocol, code }) ?? 0;

    expect((await rest(t.url, "GET", "/settings/v3alpha/languages", { token: t.adminPat })).status).toBe(200);
    expect((await rest(t.url, "GET", "/settings/v3alpha/languages", { token: t.adminPat })).status).toBe(200);
    expect((await rest(t.url, "GET", "/settings/v3alpha/languages")).status).toBe(401);
    await call("grpc", t.url, svc, resolve, resolveReq(), { token: t.adminPat });
    await expectCode(call("grpc", t.url, svc, resolve, resolveReq()), Code.Unauthenticated);
    await call("grpc-web", t.url, svc, resolve, resolveReq(), { token: t.adminPat });
    await call("connect-h1", t.url, svc, resolve, resolveReq(), { token: t.adminPat });
    await call("connect-h2", t.url, svc, resolve, resolveReq(), { token: t.adminPat });
    // Refused by the request decoder, before any interceptor runs.
    const bad = await fetch(`${t.url}/${SERVICE}/ResolveLanguages`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${t.adminPat}` },
      body: '{"ctx": {"system": "maybe"}}',
    });
    expect(bad.status).toBe(400);

    const after = await metrics();
    const delta = (protocol: string, code: string) => count(after, protocol, code) - count(before, protocol, code);
    expect(delta("rest", "OK")).toBe(2);
    expect(delta("rest", "UNAUTHENTICATED")).toBe(1);
    expect(delta("grpc", "OK")).toBe(1);
    expect(delta("grpc", "UNAUTHENTICATED")).toBe(1);
    expect(delta("grpc-web", "OK")).toBe(1);
    // Connect over HTTP/1.1 and HTTP/2; a REST call is not counted again as Connect.
    expect(delta("connect", "OK")).toBe(2);
    expect(delta("connect", "INVALID_ARGUMENT")).toBe(1);
    expect(after).not.toMatch(/svc_rpc_requests_total\{[^}]*code="UNKNOWN"/);
    const histogram = sample(after, "svc_rpc_request_duration_seconds_count", { service: SERVICE, method: "ResolveLanguages", protocol: "grpc" });
    expect(histogram).toBeGreaterThanOrEqual(2);
    expect(sample(after, "svc_rpc_request_duration_seconds_bucket", { service: SERVICE, method: "ResolveLanguages", protocol: "grpc", le: "+Inf" })).toBe(
      histogram,
    );
    // Routes that are RPCs are not counted as plain HTTP.
    expect(after).not.toMatch(/svc_http_requests_total\{[^}]*route="\/settings/);
  });

  it("counts the OAuth endpoints by route and HTTP status", async () => {
    const before = await metrics();
    const token = (body: string) =>
      fetch(`${t.url}/oauth/v2/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body });
    expect((await token(`grant_type=client_credentials&client_id=robot&client_secret=${machineSecret}`)).status).toBe(200);
    expect((await token("grant_type=client_credentials&client_id=robot&client_secret=wrong")).status).toBe(401);
    expect((await fetch(`${t.url}/.well-known/openid-configuration`)).status).toBe(200);
    const after = await metrics();
    const delta = (method: string, route: string, status: string) =>
      (sample(after, "svc_http_requests_total", { method, route, status }) ?? 0) - (sample(before, "svc_http_requests_total", { method, route, status }) ?? 0);
    expect(delta("POST", "/oauth/v2/token", "200")).toBe(1);
    expect(delta("POST", "/oauth/v2/token", "401")).toBe(1);
    expect(delta("GET", "/.well-known/openid-configuration", "200")).toBe(1);
    expect(sample(after, "svc_http_request_duration_seconds_count", { method: "POST", route: "/oauth/v2/token" })).toBeGreaterThanOrEqual(2);
    // The scrape before this one was counted too.
    expect(sample(after, "svc_http_requests_total", { method: "GET", route: "/metrics", status: "200" })).toBeGreaterThanOrEqual(1);
  });

  it("reports the database pool, the event store, the subscribers, the projection cache and the process", async () => {
    const set = await rest(t.url, "PATCH", "/settings/v3alpha/languages", { token: t.adminPat, body: { defaultLanguage: { key: "de" } } });
    expect(set.status).toBe(200);
    const text = await metrics();
    expect(sample(text, "svc_db_pool_connections", { state: "idle" })).toBeGreaterThanOrEqual(0);
    expect(sample(text, "svc_db_pool_connections", { state: "used" })).toBeGreaterThanOrEqual(0);
    expect(sample(text, "svc_db_pool_waiting_requests")).toBeGreaterThanOrEqual(0);
    expect(sample(text, "svc_db_pool_max_connections")).toBeGreaterThan(0);
    expect(sample(text, "svc_eventstore_events_appended_total")).toBeGreaterThanOrEqual(1);
    expect(sample(text, "svc_eventstore_append_duration_seconds_count")).toBeGreaterThanOrEqual(1);
    expect(sample(text, "svc_subscriber_lag_events", { subscription: "event-executions" })).toBeGreaterThanOrEqual(0);
    expect(sample(text, "svc_projection_cache_requests_total", { result: "hit" })).toBeGreaterThan(0);
    expect(sample(text, "svc_projection_cache_requests_total", { result: "miss" })).toBeGreaterThan(0);
    expect(sample(text, "process_cpu_user_seconds_total")).toBeGreaterThan(0);
    expect(sample(text, "nodejs_eventloop_lag_seconds")).toBeGreaterThanOrEqual(0);
  });

  it("is not readable cross-origin from a browser", async () => {
    const r = await fetch(`${t.url}/metrics`, { headers: { origin: "https://evil.example" } });
    expect(r.status).toBe(200);
    expect(r.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("exports a span per request to the OTLP endpoint, with the standard attributes and the caller's trace", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const parentId = "00f067aa0ba902b7";
    const r = await rest(t.url, "GET", "/settings/v3alpha/languages", { token: t.adminPat, headers: { traceparent: `00-${traceId}-${parentId}-01` } });
    expect(r.status).toBe(200);
    await call("grpc", t.url, svc, resolve, resolveReq(), { token: t.adminPat });
    await expectCode(call("connect-h1", t.url, svc, resolve, resolveReq()), Code.Unauthenticated);
    await fetch(`${t.url}/oauth/v2/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "grant_type=nope" });

    const restSpan = await receiver.waitFor(() => receiver.jsonSpans().find((s) => s.traceId === traceId), "REST span");
    expect(restSpan.name).toBe("GET /settings/v3alpha/languages");
    expect(restSpan.kind).toBe(2); // SERVER
    expect(restSpan.parentSpanId).toBe(parentId);
    expect(restSpan.attributes).toMatchObject({
      "http.request.method": "GET",
      "http.route": "/settings/v3alpha/languages",
      "url.path": "/settings/v3alpha/languages",
      "url.scheme": "http",
      "server.address": "127.0.0.1",
      "network.protocol.version": "1.1",
      "rpc.method": `${SERVICE}/ResolveLanguages`,
      "svc.rpc.protocol": "rest",
      "resource.service.name": "svc-iam",
    });
    expect(Number(restSpan.attributes["http.response.status_code"])).toBe(200);

    const rpc = await receiver.waitFor(
      () => receiver.jsonSpans().find((s) => s.name === `${SERVICE}/ResolveLanguages` && s.attributes["rpc.system.name"] === "grpc"),
      "gRPC span",
    );
    expect(rpc.attributes).toMatchObject({ "rpc.method": `${SERVICE}/ResolveLanguages`, "rpc.status_code": "OK", "network.protocol.version": "2" });
    const denied = await receiver.waitFor(
      () => receiver.jsonSpans().find((s) => s.attributes["rpc.system.name"] === "connectrpc" && s.attributes["rpc.status_code"] === "UNAUTHENTICATED"),
      "Connect span",
    );
    expect(denied.status?.code ?? 0).not.toBe(2); // a caller's error is not the server's
    const oauth = await receiver.waitFor(
      () => receiver.jsonSpans().find((s) => s.name === "POST /oauth/v2/token" && Number(s.attributes["http.response.status_code"]) === 400),
      "token endpoint span",
    );
    expect(oauth.attributes).toMatchObject({ "http.route": "/oauth/v2/token", "url.path": "/oauth/v2/token" });
    expect(oauth.status?.code ?? 0).not.toBe(2);
  });

  it("begins a trace for a request without one: its log line's trace ID is its span's", async () => {
    const path = "/oauth/v2/keys";
    expect((await fetch(`${t.url}${path}`)).status).toBe(200);
    const line = await receiver.waitFor(() => logLines.find((l) => l.path === path), "request log line");
    expect(line.traceId).toMatch(/^[\da-f]{32}$/);
    const span = await receiver.waitFor(() => receiver.jsonSpans().find((s) => s.attributes["url.path"] === path), "span");
    expect(span.traceId).toBe(line.traceId);
    expect(span.parentSpanId ?? "").toBe("");
    // each request begins its own
    expect((await fetch(`${t.url}${path}`)).status).toBe(200);
    const lines = await receiver.waitFor(() => {
      const found = logLines.filter((l) => l.path === path);
      return found.length === 2 ? found : undefined;
    }, "second log line");
    expect(lines[1]!.traceId).not.toBe(lines[0]!.traceId);
  });
});

describe("SVC_METRICS=off, traces as OTLP/protobuf", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ SVC_METRICS: "off", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${otlp}/v1/traces` });
  });
  afterAll(() => t?.close());

  it("answers /metrics with 404", async () => {
    expect((await fetch(`${t.url}/metrics`)).status).toBe(404);
  });

  it("still exports spans, in protobuf by default", async () => {
    await call("grpc", t.url, svc, resolve, resolveReq(), { token: t.adminPat });
    const name = Buffer.from(`${SERVICE}/ResolveLanguages`);
    const got = await receiver.waitFor(
      () => receiver.received.find((r) => r.contentType === "application/x-protobuf" && r.body.includes(name)),
      "protobuf export with the gRPC span",
    );
    expect(got.body.includes(Buffer.from("rpc.system.name"))).toBe(true);
    expect(got.body.includes(Buffer.from("svc-iam"))).toBe(true);
  });
});

describe("the OTEL_* variables and SVC_METRICS", () => {
  it("turn tracing on only when an exporter or an OTLP endpoint is named", () => {
    expect(tracingFromEnv({})).toBeUndefined();
    expect(tracingFromEnv({ OTEL_SERVICE_NAME: "iam" })).toBeUndefined();
    expect(tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })).toEqual({
      exporters: ["otlp"],
      endpoint: "http://collector:4318/v1/traces",
      protocol: "http/protobuf",
    });
    expect(tracingFromEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://c.example/traces", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" })).toEqual({
      exporters: ["otlp"],
      endpoint: "https://c.example/traces",
      protocol: "http/json",
    });
    expect(tracingFromEnv({ OTEL_TRACES_EXPORTER: "otlp,console" })).toEqual({
      exporters: ["otlp", "console"],
      endpoint: "http://localhost:4318/v1/traces",
      protocol: "http/protobuf",
    });
    expect(tracingFromEnv({ OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" })).toBeUndefined();
    expect(tracingFromEnv({ OTEL_SDK_DISABLED: "true", OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" })).toBeUndefined();
  });

  it("refuse what would send spans nowhere, naming the variable", () => {
    expect(() => tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4317", OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "grpc" })).toThrow(
      /OTEL_EXPORTER_OTLP_TRACES_PROTOCOL "grpc" is not supported/,
    );
    expect(() => tracingFromEnv({ OTEL_TRACES_EXPORTER: "zipkin" })).toThrow(/OTEL_TRACES_EXPORTER: "zipkin" is not supported/);
    expect(() => tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT must be an http/);
    expect(() => tracingFromEnv({ OTEL_TRACES_EXPORTER: "console", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).not.toThrow();
  });

  it("load neither prom-client nor OpenTelemetry, and add no interceptor, when both are off", () => {
    /** What a fresh process has loaded after setting up observation with `env`. */
    const probe = (env: Record<string, string>) => {
      const script = `
        import { createRequire } from "node:module";
        const require = createRequire(import.meta.url);
        const { loadConfig } = await import("./src/config/config.ts");
        const { startObserving } = await import("./src/server/observe.ts");
        const o = await startObserving(loadConfig(${JSON.stringify(env)}, []), { log: { warn() {} } });
        const loaded = Object.keys(require.cache).filter((k) => /@opentelemetry|prom-client/.test(k));
        console.log(JSON.stringify({ interceptors: o.interceptors.length, otel: loaded.some((k) => k.includes("@opentelemetry/sdk-trace")), prom: loaded.some((k) => k.includes("prom-client")) }));
        await o.close();`;
      const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: projectRoot, encoding: "utf8", timeout: 50_000 });
      expect(r.status, r.stderr).toBe(0);
      return JSON.parse(r.stdout.trim().split("\n").pop()!);
    };
    expect(probe({ SVC_METRICS: "off" })).toEqual({ interceptors: 0, otel: false, prom: false });
    expect(probe({})).toEqual({ interceptors: 1, otel: false, prom: true });
    expect(probe({ SVC_METRICS: "off", OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" })).toEqual({ interceptors: 1, otel: true, prom: false });
  });

  it("SVC_METRICS is on by default and takes on/off", () => {
    expect(loadConfig({}, []).metrics).toBe(true);
    expect(loadConfig({ SVC_METRICS: "off" }, []).metrics).toBe(false);
    expect(loadConfig({ SVC_METRICS: "ON" }, []).metrics).toBe(true);
    expect(() => loadConfig({ SVC_METRICS: "maybe" }, [])).toThrow(ConfigError);
    expect(() => loadConfig({ SVC_METRICS: "maybe" }, [])).toThrow(/SVC_METRICS/);
  });
});
