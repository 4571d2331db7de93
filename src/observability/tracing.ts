import type { IncomingHttpHeaders } from "node:http";
import { type Attributes, DiagLogLevel, defaultTextMapGetter, diag, ROOT_CONTEXT, SpanKind, SpanStatusCode, type Tracer } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  type IdGenerator,
  RandomIdGenerator,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_NETWORK_PROTOCOL_VERSION,
  ATTR_RPC_METHOD,
  ATTR_RPC_STATUS_CODE,
  ATTR_RPC_SYSTEM_NAME,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_NAME,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from "@opentelemetry/semantic-conventions";
import type { TracingConfig } from "../config/otel.js";

/** One request as the server layer saw it, for its span. */
export interface RequestSpan {
  /** `performance.now()` at the arrival of the request and at the end of its response. */
  startMs: number;
  endMs: number;
  /** HTTP method, route template (`/oauth/v2/token`, `/svc.x.v1.S/M`, the google.api.http template), path. */
  method: string;
  route: string;
  path: string;
  status: number;
  scheme: string;
  httpVersion: string;
  host: string | undefined;
  port: number | undefined;
  clientAddress: string | undefined;
  headers: IncomingHttpHeaders;
  /** The request's trace ID (its log line's): the caller's trace's, else the one a trace without a caller gets. */
  traceId: string;
  /** Set for RPCs: the fully qualified method (`pkg.Service/Method`), the protocol and the gRPC status code's name. */
  rpc?: { method: string; protocol: string; code: string };
}

export interface Tracing {
  /** Records the finished request as a server span (a child of the caller's `traceparent`, if any). */
  request(span: RequestSpan): void;
  /** Exports what is still queued and stops. */
  shutdown(): Promise<void>;
}

export interface TracingLog {
  warn(obj: object, msg: string): void;
}

// Codes that mean the server failed, not the caller: the server span's status is then ERROR (RPC semantic conventions).
const serverFaults = new Set(["UNKNOWN", "DEADLINE_EXCEEDED", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS"]);

async function exporterOf(kind: "otlp" | "console", config: TracingConfig): Promise<SpanExporter> {
  if (kind === "console") return new ConsoleSpanExporter();
  // Headers, timeout and compression come from the OTEL_EXPORTER_OTLP_* variables, read by the exporter.
  const { OTLPTraceExporter } =
    config.protocol === "http/json" ? await import("@opentelemetry/exporter-trace-otlp-http") : await import("@opentelemetry/exporter-trace-otlp-proto");
  return new OTLPTraceExporter({ url: config.endpoint });
}

/**
 * The OpenTelemetry SDK, started only when the OTEL_* variables ask for tracing (this module is imported only
 * then): a span per request, batched and exported over OTLP/HTTP. The provider is not registered as the global
 * one: the spans are made here and nowhere else, and several servers in one process (the tests) each keep
 * their own. The sampler (`OTEL_TRACES_SAMPLER`, parent-based always-on by default), the batch settings
 * (`OTEL_BSP_*`) and the resource (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`) follow the standard variables.
 */
export async function startTracing(config: TracingConfig, log: TracingLog): Promise<Tracing> {
  diag.setLogger(
    {
      error: (message, ...args) => log.warn({ args }, `OpenTelemetry: ${message}`),
      warn: (message, ...args) => log.warn({ args }, `OpenTelemetry: ${message}`),
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
  const exporters = await Promise.all(config.exporters.map((kind) => exporterOf(kind, config)));
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: "svc-iam" }))
    .merge(detectResources({ detectors: [envDetector] }));
  // A span without a caller's trace begins the trace its request's log line names (`beginning`, set around
  // the synchronous startSpan below); with a caller's trace, the SDK takes the parent's and asks for no ID.
  let beginning: string | undefined;
  const random = new RandomIdGenerator();
  const idGenerator: IdGenerator = { generateTraceId: () => beginning ?? random.generateTraceId(), generateSpanId: () => random.generateSpanId() };
  const provider = new BasicTracerProvider({ resource, idGenerator, spanProcessors: exporters.map((e) => new BatchSpanProcessor(e)) });
  const tracer: Tracer = provider.getTracer("svc-iam");
  const propagator = new W3CTraceContextPropagator();
  const origin = performance.timeOrigin;

  return {
    request(r) {
      const parent = propagator.extract(ROOT_CONTEXT, r.headers, defaultTextMapGetter);
      const attributes: Attributes = {
        [ATTR_HTTP_REQUEST_METHOD]: r.method,
        [ATTR_HTTP_ROUTE]: r.route,
        [ATTR_URL_PATH]: r.path,
        [ATTR_URL_SCHEME]: r.scheme,
        [ATTR_HTTP_RESPONSE_STATUS_CODE]: r.status,
        [ATTR_NETWORK_PROTOCOL_VERSION]: r.httpVersion === "2.0" ? "2" : r.httpVersion,
      };
      if (r.host !== undefined) attributes[ATTR_SERVER_ADDRESS] = r.host;
      if (r.port !== undefined) attributes[ATTR_SERVER_PORT] = r.port;
      if (r.clientAddress !== undefined) attributes[ATTR_CLIENT_ADDRESS] = r.clientAddress;
      const agent = r.headers["user-agent"];
      if (agent) attributes[ATTR_USER_AGENT_ORIGINAL] = agent;
      let name = `${r.method} ${r.route}`;
      let failed = r.status >= 500;
      let errorType = failed ? String(r.status) : undefined;
      if (r.rpc) {
        attributes[ATTR_RPC_METHOD] = r.rpc.method;
        attributes["svc.rpc.protocol"] = r.rpc.protocol;
        if (r.rpc.protocol !== "rest") {
          // A REST call is an HTTP request to a route; the others are RPCs named by their method.
          name = r.rpc.method;
          attributes[ATTR_RPC_SYSTEM_NAME] = r.rpc.protocol === "connect" ? "connectrpc" : "grpc";
          attributes[ATTR_RPC_STATUS_CODE] = r.rpc.code;
          failed = serverFaults.has(r.rpc.code);
          errorType = failed ? r.rpc.code : undefined;
        }
      }
      if (errorType) attributes[ATTR_ERROR_TYPE] = errorType;
      beginning = r.traceId;
      let span: ReturnType<Tracer["startSpan"]>;
      try {
        span = tracer.startSpan(name, { kind: SpanKind.SERVER, startTime: origin + r.startMs, attributes }, parent);
      } finally {
        beginning = undefined;
      }
      if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end(origin + r.endMs);
    },
    shutdown: () => provider.shutdown(),
  };
}
