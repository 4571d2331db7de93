import type { Code } from "@connectrpc/connect";
import type { FastifyRequest } from "fastify";

/**
 * The outcome of each call, noted where it is known (the REST gateway, the older APIs' routes, the Connect
 * interceptor) for the metrics and traces of server/observe.ts, which turns this on for the servers it observes.
 */

declare module "fastify" {
  interface FastifyRequest {
    /** The RPC's outcome as noted on the way (0: OK, else Connect's code; -1: none yet). Only on observed servers. */
    svcRpcCode: number;
  }
}

/** Whether any server of this process observes requests: otherwise nothing is noted. */
let observing = false;

/** From now on, calls' outcomes are noted (server/observe.ts, for a server with metrics or tracing). */
export function observeRpcCodes(): void {
  observing = true;
}

/** The outcome of an RPC (0: OK, else Connect's code), as the caller gets it. */
export function noteRpcCode(request: FastifyRequest, code: Code | 0): void {
  if (observing) request.svcRpcCode = code;
}

/** What the REST gateway and the older APIs mark their routes with: the RPC behind the route and its path template. */
export interface RestRouteConfig {
  svcRpc: { service: string; method: string; template: string };
}
