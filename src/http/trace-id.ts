import { randomBytes } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";

/**
 * Every request's trace ID: the caller's (a W3C `traceparent`, whose trace the request's span joins), else a new
 * one. The request's log line carries it, and so does its span when tracing is on (src/observability/tracing.ts
 * starts a trace without a caller with this ID), so a line found in the logs leads to its trace.
 */

declare module "fastify" {
  interface FastifyRequest {
    /** 32 lower-case hex digits: the caller's trace, else one begun for this request. */
    readonly traceId: string;
  }
}

/** A W3C `traceparent` header's trace ID, or undefined when there is none or it is malformed or all zeros. */
export function traceIdOf(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  const m = value === undefined ? null : /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/.exec(value.trim().toLowerCase());
  return m && !/^0+$/.test(m[1]!) ? m[1] : undefined;
}

/** Gives every request its `traceId`, worked out once when first asked for. */
export function decorateTraceId(app: FastifyInstance): void {
  const known = new WeakMap<FastifyRequest, string>();
  app.decorateRequest("traceId", {
    getter(this: FastifyRequest): string {
      let id = known.get(this);
      if (!id) {
        id = traceIdOf(this.headers.traceparent) ?? randomBytes(16).toString("hex");
        known.set(this, id);
      }
      return id;
    },
  });
}
