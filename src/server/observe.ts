import { type Code, type ContextValues, ConnectError, createContextKey, createContextValues, type Interceptor } from "@connectrpc/connect";
import type { FastifyInstance, FastifyReply, FastifyRequest, onResponseHookHandler, RouteOptions } from "fastify";
import type { WorkerPeers } from "./worker-peers.js";
import type { Config } from "../config/config.js";
import type { EventStore } from "../eventstore/eventstore.js";
import type { CacheStats, MessageStats, Metrics, PoolStats, ReadStats, Recorder, SubscriberLag } from "../observability/metrics.js";
import type { RequestSpan, Tracing, TracingLog } from "../observability/tracing.js";
import type { Mounted } from "./services.js";
import { observeRpcCodes, type RestRouteConfig } from "../http/rpc-code.js";

/**
 * Metrics and traces of requests, hooked into Fastify where a request ends: one `onResponse` hook per route,
 * added as the route is registered, with the route's labels worked out once. The duration is Fastify's
 * (`reply.elapsedTime`: from the request's arrival to the end of the response), so no hook runs at the start.
 *
 * Every request is counted once. An RPC over gRPC, gRPC-web or Connect arrives at the route of its method
 * (`/pkg.Service/Method`); a REST call at its google.api.http route, which hands it to the same Connect handler
 * directly (no second Fastify request), so it is counted there with the protocol `rest`. The gRPC status code
 * is noted per request: by the outermost interceptor (which reaches the Fastify request through the Connect
 * context values), by the request decoder for bodies refused before any interceptor runs (`decoding.ts`), and
 * by the REST gateway for what it answers itself. Any other route is counted by method, route and HTTP status.
 */

/** gRPC status code names by number (Connect's `Code` has no OK; 0 is OK here). */
const CODE_NAMES = [
  "OK",
  "CANCELLED",
  "UNKNOWN",
  "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION",
  "ABORTED",
  "OUT_OF_RANGE",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
  "UNAUTHENTICATED",
];

const kRequest = createContextKey<FastifyRequest | undefined>(undefined, { description: "the Fastify request of an RPC" });

/** The same from inside Connect: a no-op unless requests are observed (the context then carries the request). */
export function noteRpcCodeIn(values: ContextValues, code: Code): void {
  const request = values.get(kRequest);
  if (request) request.svcRpcCode = code;
}

export const isObserved = (values: ContextValues): boolean => values.get(kRequest) !== undefined;

/**
 * Each running subscription of this process: how far its handled cursor is behind the newest committed event,
 * in log positions. Positions are taken from one sequence as events are appended, so this is the number of
 * events appended after the last one handled (plus the few positions of appends that rolled back).
 */
function subscriberLag(es: Pick<EventStore, "latest" | "subscriptionCursors">): SubscriberLag {
  return async () => {
    const running = es.subscriptionCursors();
    if (!running.length) return [];
    const latest = await es.latest();
    return running.map(({ name, cursor }) => ({ name, behind: Math.max(0, Number(latest.position - cursor.position)) }));
  };
}

type Protocol = "grpc" | "grpc-web" | "connect";

function protocolOf(contentType: string | undefined): Protocol {
  if (contentType?.startsWith("application/grpc-web")) return "grpc-web";
  if (contentType?.startsWith("application/grpc")) return "grpc";
  return "connect";
}

export interface Observe {
  /** The first interceptor (outermost): it notes each RPC's code. Empty when nothing is observed. */
  interceptors: Interceptor[];
  /** For the Connect plugin: the Fastify request in each call's context. */
  contextValues: ((req: FastifyRequest) => ContextValues) | undefined;
  /** Hooks every route registered after this call and serves GET /metrics (SVC_METRICS). Call before any route. */
  register(app: FastifyInstance, mounted: Mounted[]): void;
  /** Counts the event store's appends, and reads its subscribers' lag at each scrape. */
  watch(es: Pick<EventStore, "onAppended" | "latest" | "subscriptionCursors">): void;
  /** Reads the notification worker's counts at each scrape (`svc_notifications_total`). */
  watchMessages(stats: MessageStats): void;
  /** Exports the spans still queued. */
  close(): Promise<void>;
}

/**
 * Metrics (SVC_METRICS, on by default) and traces (the OTEL_* variables). prom-client and the OpenTelemetry
 * SDK are imported only when asked for: with both off nothing is loaded and no hook is added.
 */
export async function startObserving(
  config: Config,
  sources: { pool?: PoolStats; cache?: CacheStats; reads?: ReadStats; failovers?: () => number; log: TracingLog; peers?: WorkerPeers | undefined },
): Promise<Observe> {
  const peers = sources.peers;
  const metrics: Metrics | undefined = config.metrics
    ? new (await import("../observability/metrics.js")).Metrics({ ...sources, labels: peers ? { worker: String(peers.role.slot) } : {} })
    : undefined;
  const tracing: Tracing | undefined = config.tracing
    ? await (await import("../observability/tracing.js")).startTracing(config.tracing, sources.log)
    : undefined;
  if (!metrics && !tracing) {
    return { interceptors: [], contextValues: undefined, register: () => {}, watch: () => {}, watchMessages: () => {}, close: async () => {} };
  }
  observeRpcCodes();
  // Not async: a call without a Fastify request in its context (REST: the gateway notes its code) passes through as is.
  const notingCodes: Interceptor = (next) => (req) => {
    const request = req.contextValues.get(kRequest);
    if (!request) return next(req);
    return next(req).then(
      (res) => {
        request.svcRpcCode = 0;
        return res;
      },
      (e: unknown) => {
        request.svcRpcCode = ConnectError.from(e).code;
        throw e;
      },
    );
  };

  const span = (request: FastifyRequest, reply: FastifyReply, route: string, rpc?: RequestSpan["rpc"]) => {
    const endMs = performance.now();
    tracing!.request({
      startMs: endMs - reply.elapsedTime,
      endMs,
      method: request.method,
      route,
      path: request.url.split("?", 1)[0]!,
      status: reply.statusCode,
      scheme: request.protocol,
      httpVersion: request.raw.httpVersion,
      host: request.hostname || undefined,
      port: request.port ?? undefined,
      clientAddress: request.client.address,
      headers: request.headers,
      traceId: request.traceId,
      rpc,
    });
  };

  /** An RPC's route: the protocol is the request's, the code noted on the way (UNKNOWN: refused before any note). */
  const rpcHook = (service: string, method: string, route: string, fixed?: "rest"): onResponseHookHandler => {
    const recorders = new Map<string, Recorder>();
    const qualified = `${service}/${method}`;
    return (request, reply, done) => {
      const protocol = fixed ?? protocolOf(request.headers["content-type"]);
      const code = CODE_NAMES[request.svcRpcCode] ?? "UNKNOWN";
      if (metrics) {
        let record = recorders.get(protocol);
        if (!record) {
          record = metrics.rpc(service, method, protocol);
          recorders.set(protocol, record);
        }
        record(reply.elapsedTime / 1000, code);
      }
      if (tracing) span(request, reply, route, { method: qualified, protocol, code });
      done();
    };
  };

  /** Any other route: by HTTP method, route and status. */
  const httpHook = (route: string): onResponseHookHandler => {
    const recorders = new Map<string, Recorder>();
    return (request, reply, done) => {
      if (metrics) {
        let record = recorders.get(request.method);
        if (!record) {
          record = metrics.http(request.method, route);
          recorders.set(request.method, record);
        }
        record(reply.elapsedTime / 1000, reply.statusCode);
      }
      if (tracing) span(request, reply, route);
      done();
    };
  };

  return {
    interceptors: [notingCodes],
    contextValues: (req) => createContextValues().set(kRequest, req),
    register(app, mounted) {
      // A property of every request (rather than a side table): set and read at the cost of a field.
      app.decorateRequest("svcRpcCode", -1);
      const rpcPaths = new Map<string, { service: string; method: string }>();
      for (const m of mounted)
        for (const x of m.service.methods) rpcPaths.set(`/${m.service.typeName}/${x.name}`, { service: m.service.typeName, method: x.name });
      app.addHook("onRoute", (route: RouteOptions) => {
        const rest = (route.config as Partial<RestRouteConfig> | undefined)?.svcRpc;
        const rpc = rpcPaths.get(route.url);
        const hook = rest ? rpcHook(rest.service, rest.method, rest.template, "rest") : rpc ? rpcHook(rpc.service, rpc.method, route.url) : httpHook(route.url);
        route.onResponse = [...(route.onResponse === undefined ? [] : [route.onResponse].flat()), hook];
      });
      if (!metrics) return;
      // With workers a scrape reaches one of them: it answers for the machine (worker-metrics.ts).
      peers?.serveMetrics(() => metrics.text());
      const text = peers ? () => peers.machineMetrics() : () => metrics.text();
      app.get("/metrics", async (_req, reply) => reply.type(metrics.contentType).send(await text()));
    },
    watchMessages(stats) {
      metrics?.watchMessages(stats);
    },
    watch(es) {
      if (!metrics) return;
      es.onAppended((ms, events) => metrics.appended(ms, events));
      metrics.watchSubscribers(subscriberLag(es));
    },
    close: async () => {
      await tracing?.shutdown();
    },
  };
}
