import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Caller, Target } from "../../authz/context.js";
import { refuseBlockedInstance } from "../../authz/blocked.js";
import { type AuthDeps, authenticateCall, permissionsIn } from "../../authz/interceptor.js";
import { addressKey } from "../../domain/client-address.js";
import type { InstanceRow } from "../../domain/contexts.js";
import { errors } from "../../errors/errors.js";
import { registerJsonScope } from "../../http/json-edge.js";
import { noteRpcCode, type RestRouteConfig } from "../../http/rpc-code.js";

/**
 * The older admin and management APIs are JSON over HTTP only (contract): plain Fastify routes, not RPCs.
 * They authenticate and authorize as the interceptors do (src/authz/), with the same verifiers and role
 * permissions, and answer errors with the REST gateway's status object {code, message, details}.
 */
export type HttpAuthDeps = AuthDeps;

export interface Authenticated {
  instance: InstanceRow;
  caller: Caller;
}

/** As every RPC is authenticated (src/authz/interceptor.ts): the Host's instance, the token's caller bound to it. */
export function authenticate(deps: HttpAuthDeps, req: FastifyRequest): Promise<Authenticated> {
  return authenticateCall(deps, { host: req.client.host, authorization: req.headers.authorization, address: addressKey(req.client.address) });
}

/**
 * As every RPC is authorized (src/authz/interceptor.ts): RESOURCE_EXHAUSTED when `target` is in a blocked
 * instance, then PERMISSION_DENIED unless the caller holds `permission` in `target`.
 */
export function authorize(deps: HttpAuthDeps, caller: Caller, target: Target, permission: string): void {
  refuseBlockedInstance(target);
  if (!permissionsIn(caller, target, deps.rolePermissions).has(permission)) {
    throw errors.permissionDenied("PORT-d3ny", `missing permission ${permission} in the ${target.type} context`);
  }
}

/** One older API's route: a POST with a JSON object body (an empty body is {}), named for metrics and traces as an RPC. */
export interface JsonRoute {
  url: string;
  /** The RPC it is in ZITADEL's API (`zitadel.admin.v1.AdminService/ExportData`), as the metrics name it. */
  rpc: { service: string; method: string };
  handler: (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
}

/**
 * Registers the routes on the server's one JSON edge (src/server/json-edge.ts), as the REST gateway's are: the
 * same body reading and error writing, bodies up to `bodyLimit` (a larger one is 413 naming the alternatives).
 */
export function registerJsonRoutes(app: FastifyInstance, bodyLimit: number, routes: JsonRoute[]): void {
  const largerBodies = "import larger data from a file (data_orgs_local, data_orgs_s3, data_orgs_gcs)";
  registerJsonScope(app, { bodyLimit, largerBodies, where: "portability" }, (scope) => {
    for (const r of routes) {
      const config: RestRouteConfig = { svcRpc: { ...r.rpc, template: r.url } };
      scope.post(r.url, { config }, async (req, reply) => {
        req.body ??= {};
        const body = req.body;
        if (typeof body !== "object" || Array.isArray(body)) throw errors.invalidArgument("HTTP-b0dy", "the body must be a JSON object");
        const answer = await r.handler(req, reply);
        noteRpcCode(req, 0);
        return answer;
      });
    }
  });
}
