import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { type ErrorLog, unexpectedFault } from "./errors.js";

export type { ErrorLog } from "./errors.js";

// Codes that mean the server, not the caller, went wrong.
const serverFaults = new Set([Code.Internal, Code.Unknown, Code.DataLoss]);

/**
 * Outermost interceptor: an error that is not one of ours (a bug, a database failure) is answered by
 * unexpectedFault (logged with its stack under a reference, INTERNAL with only that reference to the caller).
 * Our own server-side errors keep their text, and are logged under a reference too, so that every 5xx leaves
 * a log line.
 */
export function createErrorLogInterceptor(log: ErrorLog): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      if (err instanceof ConnectError && !serverFaults.has(err.code)) throw err;
      const method = `${req.method.parent.typeName}/${req.method.name}`;
      const fault = unexpectedFault(log, err, { method });
      // Our own INTERNAL (an invariant broken, "AUTHZ-f0rg") says nothing internal: its text and ID go to the caller.
      throw err instanceof ConnectError ? err : fault;
    }
  };
}
