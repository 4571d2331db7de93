import { Code, ConnectError } from "@connectrpc/connect";
import { codeToHttpStatus } from "@connectrpc/connect/protocol-connect";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Caller, Target } from "../../authz/context.js";
import { refuseBlockedInstance } from "../../authz/blocked.js";
import { type AuthDeps, authenticateCall, permissionsIn } from "../../authz/interceptor.js";
import { addressKey } from "../../domain/client-address.js";
import type { InstanceRow } from "../../domain/contexts.js";
import { TimedOut } from "../../domain/data-org.js";
import { errors, statusObjectOf, unexpectedFault } from "../../errors/errors.js";

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

export function sendStatus(reply: FastifyReply, code: Code, message: string, details: unknown[] = []) {
  return reply.status(codeToHttpStatus(code)).header("content-type", "application/json").send({ code, message, details });
}

/** A ConnectError as the status object, with its details (an unexpected fault's reference among them). */
function sendConnectError(reply: FastifyReply, err: ConnectError) {
  const { code, message, details } = statusObjectOf(err);
  return sendStatus(reply, code, message, details);
}

/**
 * Registers JSON routes in a scope of their own: any JSON content type, an empty body as {}, bodies up to
 * `bodyLimit`, errors as status objects (a body too large is 413 naming the limit and the alternatives).
 */
export function registerJsonRoutes(
  app: FastifyInstance,
  bodyLimit: number,
  routes: { url: string; handler: (req: FastifyRequest, reply: FastifyReply) => Promise<unknown> }[],
): void {
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "string", bodyLimit }, (_req, text, done) => {
      const s = String(text).trim();
      if (!s) return done(null, {});
      try {
        done(null, JSON.parse(s));
      } catch (e) {
        done(errors.invalidArgument("HTTP-j50n", `the body is not valid JSON: ${(e as Error).message}`), undefined);
      }
    });
    scope.setErrorHandler((err: Error & { statusCode?: number; code?: unknown }, req, reply) => {
      if (err instanceof ConnectError) {
        // Our own server-side errors (a storage that failed, an import step's fault) leave a log line as every 5xx does.
        if (codeToHttpStatus(err.code) >= 500) req.log.error({ err }, "portability request failed on the server's side");
        return sendConnectError(reply, err);
      }
      if (err instanceof TimedOut) return sendStatus(reply, Code.DeadlineExceeded, err.message, err.details);
      if (err.statusCode === 413) {
        return reply.status(413).send({
          code: Code.InvalidArgument,
          message: `the body is larger than ${bodyLimit / 2 ** 20} MiB: import larger data from a file (data_orgs_local, data_orgs_s3, data_orgs_gcs)`,
          details: [],
        });
      }
      if (err.statusCode && err.statusCode < 500) return sendStatus(reply, Code.InvalidArgument, err.message);
      return sendConnectError(reply, unexpectedFault(req.log, err, { where: "portability" }));
    });
    for (const r of routes) {
      scope.post(r.url, { bodyLimit }, async (req, reply) => {
        const body = req.body;
        if (!body || typeof body !== "object" || Array.isArray(body)) throw errors.invalidArgument("HTTP-b0dy", "the body must be a JSON object");
        return r.handler(req, reply);
      });
    }
  });
}
