import { Code } from "@connectrpc/connect";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from "fastify";
import { type DestinationStream, type Logger, pino } from "pino";
import type { RestRouteConfig } from "../http/rpc-code.js";
import { withoutSecrets } from "./log-redaction.js";

/**
 * The server's log: one logger for the whole process (start-up lines, requests, workers), so that every line
 * has one shape. SVC_LOG_FORMAT=json (the default) writes pino's JSON, one object per line (`npm start | jq`);
 * `text` writes the same entries for people: time, level, message and the other fields as key=value.
 */
export type LogFormat = "json" | "text";

export interface LogOptions {
  /** SVC_LOG_LEVEL */
  level: string;
  /** SVC_LOG_FORMAT */
  format: LogFormat;
  /** Where the lines go (tests read them); default standard output. */
  stream?: { write(line: string): void };
}

const LEVEL_NAMES: Record<number, string> = { 10: "TRACE", 20: "DEBUG", 30: "INFO", 40: "WARN", 50: "ERROR", 60: "FATAL" };

/** A field's value in a text line: bare when it is one word, else as JSON (quoted, escaped: still one line). */
function fieldText(value: unknown): string {
  if (typeof value === "string") return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value) ?? "";
}

/** One JSON log line as a line for people: `2025-01-31T12:00:00.000Z INFO  message key=value ...`. */
export function textLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith("\n") ? json : `${json}\n`;
  }
  const { level, time, msg, pid: _pid, hostname: _hostname, ...fields } = entry;
  const when = typeof time === "number" ? new Date(time).toISOString() : String(time ?? "");
  const name = (LEVEL_NAMES[Number(level)] ?? String(level)).padEnd(5);
  const rest = Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${fieldText(v)}`);
  // One entry, one line: a message's line breaks are written as \n.
  const text = typeof msg === "string" ? msg.replace(/\r?\n/g, "\\n") : "";
  return `${[when, name, text, ...rest].filter((part) => part !== "").join(" ")}\n`;
}

/** The request as log lines show it: the client as the server believes it (behind trusted proxies, what they forwarded). */
function requestFields(req: FastifyRequest) {
  return { method: req.method, url: req.url, host: req.client.host, remoteAddress: req.client.address };
}

/**
 * The process's logger. Secret query parameters are redacted in every line as it is written
 * (`log-redaction.ts`), the Authorization header never appears.
 */
export function createLogger(o: LogOptions): Logger {
  const out: DestinationStream = o.stream ?? pino.destination({ fd: 1, sync: true });
  const stream: DestinationStream = o.format === "text" ? { write: (line: string) => void out.write(textLine(line)) } : out;
  return pino(
    {
      level: o.level,
      redact: ["req.headers.authorization"],
      hooks: { streamWrite: withoutSecrets },
      serializers: { req: requestFields },
    },
    stream,
  );
}

/**
 * The logger of the lines an operator needs whatever SVC_LOG_LEVEL says (where the first admin's password is,
 * the database's progress, the address, the stop): at info even when the level is warn or above, none when silent.
 */
export function startupLogger(log: Logger): Logger {
  if (log.level === "silent" || log.isLevelEnabled("info")) return log;
  return log.child({}, { level: "info" });
}

/** Whether this start creates the embedded database (no cluster `pg/`, no earlier version's `pgdata/` in the data dir). */
export function isFirstEmbeddedStart(config: { databaseUrl: string | undefined; dataDir: string }): boolean {
  return config.databaseUrl === undefined && !existsSync(join(config.dataDir, "pg")) && !existsSync(join(config.dataDir, "pgdata"));
}

/**
 * Fastify's own lines about requests, less what `registerRequestLog` says once: no "incoming request" and
 * "request completed" (unless it errored), no "Route ... not found", and a client error the default error
 * handler answered at debug (the request's line has its status). Server faults keep their error lines.
 */
export class RequestLogController extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) super.requestCompleted(error, request, reply);
  }

  override routeNotFound(): void {}

  override defaultErrorLog(error: Error, request: FastifyRequest, reply: FastifyReply): void {
    if (reply.statusCode >= 500) super.defaultErrorLog(error, request, reply);
    else reply.log.debug({ err: error }, error?.message);
  }
}

/** Requests that only probe the server: logged at debug, never at info. */
const PROBES = new Set(["/healthz", "/readyz", "/metrics"]);

/** `/<package>.<Service>/<Method>`: the route of an RPC over gRPC, gRPC-web or Connect. */
const RPC_ROUTE = /^\/(?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*\/[A-Za-z_]\w*$/;

function protocolOf(contentType: string | undefined): string {
  if (contentType?.startsWith("application/grpc-web")) return "grpc-web";
  if (contentType?.startsWith("application/grpc")) return "grpc";
  return "connect";
}

/** What a finished request was: its RPC and protocol (for RPCs, and REST calls of one), its path without the query. */
function describe(req: FastifyRequest): { path: string; rpc?: string; protocol?: string } {
  const path = req.url.split("?", 1)[0]!;
  const route = req.routeOptions.url;
  const rest = (req.routeOptions.config as Partial<RestRouteConfig> | undefined)?.svcRpc;
  if (rest) return { path, rpc: `/${rest.service}/${rest.method}`, protocol: "rest" };
  if (route !== undefined && RPC_ROUTE.test(route)) return { path, rpc: route, protocol: protocolOf(req.headers["content-type"]) };
  return { path };
}

/**
 * One line per request, when its response has ended: method (or the RPC), path, status, duration, trace ID
 * (the caller's `traceparent`, else the one begun for the request: src/http/trace-id.ts; the request ID `reqId`
 * is on every line)
 * and the instance the request's host names, when there is one. The query string is not in the message (codes
 * and tokens travel there); `url` keeps it with the secret parameters redacted. Probes (/healthz, /readyz,
 * /metrics) are logged at debug. Replaces Fastify's two lines per request (`disableRequestLogging`).
 */
export function registerRequestLog(app: FastifyInstance, instanceOf: (host: string) => Promise<string | undefined>): void {
  app.addHook("onResponse", async (req: FastifyRequest, reply: FastifyReply) => {
    const { path, rpc, protocol } = describe(req);
    const level = PROBES.has(path) ? "debug" : reply.statusCode >= 500 ? "warn" : "info";
    if (!(req.log as unknown as Logger).isLevelEnabled(level)) return;
    const ms = Math.round(reply.elapsedTime * 10) / 10;
    const instanceId = await instanceOf(req.client.host).catch(() => undefined);
    // The RPC's code as the caller got it, where it was noted (servers with metrics or traces: observe.ts).
    const noted = rpc && typeof req.svcRpcCode === "number" && req.svcRpcCode >= 0 ? req.svcRpcCode : undefined;
    const fields = {
      method: req.method,
      ...(rpc ? { rpc, protocol } : {}),
      ...(noted !== undefined ? { code: noted === 0 ? "OK" : Code[noted] } : {}),
      path,
      url: req.url,
      status: reply.statusCode,
      ms,
      traceId: req.traceId,
      ...(instanceId ? { instanceId } : {}),
      host: req.client.host,
      remoteAddress: req.client.address,
    };
    req.log[level](fields, `${rpc ?? `${req.method} ${path}`} ${reply.statusCode} ${ms} ms`);
  });
}
