import { Code, ConnectError } from "@connectrpc/connect";
import { codeToHttpStatus } from "@connectrpc/connect/protocol-connect";
import type { FastifyInstance, FastifyReply } from "fastify";
import { TimedOut } from "../domain/data-org.js";
import { statusObjectOf, unexpectedFault } from "../errors/errors.js";
import { noteRpcCode } from "./rpc-code.js";

/**
 * The one HTTP edge of the JSON routes that are not pages or OAuth forms: the REST gateway's (every annotated
 * RPC) and the older admin and management APIs' (export, import, user import; src/api/portability). Both read
 * bodies the same way, refuse the same things with the same status object {code, message, details}, and leave
 * the call's code for the metrics and traces (observe.ts).
 */

/** A request this edge cannot read: INVALID_ARGUMENT with the message as it is. */
export class BadRequest extends Error {}

export function sendStatus(reply: FastifyReply, code: Code, message: string, details: unknown[] = [], httpStatus = codeToHttpStatus(code)) {
  noteRpcCode(reply.request, code);
  return reply.status(httpStatus).header("content-type", "application/json").send({ code, message, details });
}

/** A ConnectError as the status object, with its details (an unexpected fault's reference among them). */
export function sendConnectError(reply: FastifyReply, err: ConnectError) {
  const { code, message, details } = statusObjectOf(err);
  return sendStatus(reply, code, message, details);
}

export interface JsonEdgeOptions {
  /** The largest body read, in bytes: a larger one is 413 (RESOURCE_EXHAUSTED) naming the limit. */
  bodyLimit: number;
  /** What to do instead, said after the limit when a body is larger. */
  largerBodies?: string;
  /** Where an unexpected fault happened, for its log line. */
  where: string;
}

/**
 * Registers routes in a scope of their own: bodies of any JSON content type up to `bodyLimit` (an empty body is
 * an absent one, `undefined`), and errors as status objects. A ConnectError answers with its code; our own
 * server-side ones (a storage that failed) leave a log line as every 5xx does; a deadline that ran out
 * (`TimedOut`) is DEADLINE_EXCEEDED with what was done as details; anything else is an unexpected fault.
 */
export function registerJsonScope(app: FastifyInstance, options: JsonEdgeOptions, routes: (scope: FastifyInstance) => void): void {
  const { bodyLimit } = options;
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "string", bodyLimit }, (_req, text, done) => {
      const s = String(text).trim();
      if (!s) return done(null, undefined);
      try {
        done(null, JSON.parse(s));
      } catch (e) {
        done(new BadRequest(`the body is not valid JSON: ${(e as Error).message}`), undefined);
      }
    });
    scope.setErrorHandler((err: Error & { statusCode?: number }, req, reply) => {
      if (err instanceof BadRequest) return sendStatus(reply, Code.InvalidArgument, err.message);
      if (err instanceof ConnectError) {
        if (codeToHttpStatus(err.code) >= 500) req.log.error({ err }, `${options.where}: the request failed on the server's side`);
        return sendConnectError(reply, err);
      }
      if (err instanceof TimedOut) return sendStatus(reply, Code.DeadlineExceeded, err.message, err.details);
      if (err.statusCode === 413) {
        const limit = bodyLimit % 2 ** 20 === 0 ? `${bodyLimit / 2 ** 20} MiB` : `${bodyLimit} bytes`;
        const message = `the body is larger than ${limit}${options.largerBodies ? `: ${options.largerBodies}` : ""}`;
        return sendStatus(reply, Code.ResourceExhausted, message, [], 413);
      }
      if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) return sendStatus(reply, Code.InvalidArgument, err.message);
      return sendConnectError(reply, unexpectedFault(reply.log, err, { where: options.where }));
    });
    routes(scope);
  });
}
