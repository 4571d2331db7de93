import { Code, ConnectError } from "@connectrpc/connect";

/**
 * The one error type of the API is ConnectError. Every error carries an ID unique to the place that throws
 * it ("LANG-3k9d"), so a log line or a client report leads to one line of code.
 */
function make(code: Code) {
  return (id: string, message: string, cause?: unknown) => new ConnectError(`${message} (${id})`, code, undefined, undefined, cause);
}

export const errors = {
  invalidArgument: make(Code.InvalidArgument),
  notFound: make(Code.NotFound),
  alreadyExists: make(Code.AlreadyExists),
  failedPrecondition: make(Code.FailedPrecondition),
  permissionDenied: make(Code.PermissionDenied),
  unauthenticated: make(Code.Unauthenticated),
  aborted: make(Code.Aborted),
  unavailable: make(Code.Unavailable),
  resourceExhausted: make(Code.ResourceExhausted),
  internal: make(Code.Internal),
};

/** HTTP status of each gRPC code, as the contract fixes it for REST. */
export function httpStatusOf(code: Code): number {
  switch (code) {
    case Code.InvalidArgument:
    case Code.FailedPrecondition:
    case Code.OutOfRange:
      return 400;
    case Code.Unauthenticated:
      return 401;
    case Code.PermissionDenied:
      return 403;
    case Code.NotFound:
      return 404;
    case Code.AlreadyExists:
    case Code.Aborted:
      return 409;
    case Code.ResourceExhausted:
      return 429;
    case Code.Canceled:
      return 499;
    case Code.Unimplemented:
      return 501;
    case Code.Unavailable:
      return 503;
    case Code.DeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

/**
 * A unique-constraint violation, optionally on the given model: Prisma's P2002, or PostgreSQL's 23505 on
 * the model's table (`table`) from a statement sent without Prisma.
 */
export function isUniqueViolation(err: unknown, model?: string, table?: string): boolean {
  const e = err as { code?: string; table?: string; meta?: { modelName?: string } } | undefined;
  if (e?.code === "23505") return model === undefined || (table !== undefined && e.table === table);
  if (e?.code !== "P2002") return false;
  return model === undefined || e.meta?.modelName === model;
}
