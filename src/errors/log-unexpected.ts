import { randomUUID } from "node:crypto";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { errors } from "./errors.js";

export interface ErrorLog {
  error(obj: object, msg: string): void;
}

// Codes that mean the server, not the caller, went wrong.
const serverFaults = new Set([Code.Internal, Code.Unknown, Code.DataLoss]);

/**
 * Outermost interceptor: an error that is not one of ours (a bug, a database failure) is logged with its stack
 * under a reference, and the caller gets INTERNAL with only that reference: internal text (SQL, driver
 * messages) never reaches a client, and every 5xx leaves a log line that the reference finds.
 */
export function createErrorLogInterceptor(log: ErrorLog): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      const method = `${req.method.parent.typeName}/${req.method.name}`;
      if (err instanceof ConnectError && !serverFaults.has(err.code)) throw err;
      const ref = randomUUID();
      log.error({ err, method, ref }, "request failed on the server's side");
      if (err instanceof ConnectError) throw err;
      throw errors.internal("SRV-unx1", `internal error, reference ${ref}`);
    }
  };
}
