import { randomUUID } from "node:crypto";
import { create, createRegistry, fromBinary, type JsonObject, type JsonValue, toJson } from "@bufbuild/protobuf";
import { base64Encode } from "@bufbuild/protobuf/wire";
import { Code, ConnectError } from "@connectrpc/connect";
import { errorFromJsonBytes } from "@connectrpc/connect/protocol-connect";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { reasonsOf } from "./causes.js";
import { databaseUnavailable } from "./database-unavailable.js";

/** The domain of this server's google.rpc.ErrorInfo details. */
export const ERROR_DOMAIN = "svc-iam";

/**
 * The one error type of the API is ConnectError. Every error carries an ID unique to the place that throws
 * it ("LANG-3k9d"), so a log line or a client report leads to one line of code: as an ErrorInfo detail (its
 * `reason`), which clients can read without parsing text, and at the end of the message, where people read it.
 * A fault that is not one of ours (unexpectedFault, below) carries instead the reference of the log line that
 * holds its stack.
 */
function make(code: Code) {
  return (id: string, message: string, cause?: unknown) =>
    new ConnectError(`${message} (${id})`, code, undefined, [{ desc: ErrorInfoSchema, value: { reason: id, domain: ERROR_DOMAIN } }], cause);
}

/** The ID of one of our errors (`USER-d0mn`), from its ErrorInfo detail; undefined for any other error. */
export function errorIdOf(err: unknown): string | undefined {
  if (!(err instanceof ConnectError)) return undefined;
  return err.findDetails(ErrorInfoSchema).find((d) => d.domain === ERROR_DOMAIN && d.reason !== FAULT_REASON)?.reason;
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

/** Where an unexpected fault is logged: a Fastify request's logger, or the app's. */
export interface ErrorLog {
  error(obj: object, msg: string): void;
}

/** The ErrorInfo of a server fault: its reason and domain, the reference under `metadata.reference`. */
export const FAULT_REASON = "UNEXPECTED_FAULT";

/**
 * The one answer to a fault that is not the caller's (a bug, a database failure), wherever it is caught: the
 * fault is logged with its stack under a new reference (`ref` in the log line, with `context`), and the client
 * gets INTERNAL "internal error" with that reference as a google.rpc.ErrorInfo detail and nothing of the
 * internal text (SQL, driver messages). Every 5xx so leaves a log line that the reference finds. A database that
 * cannot be reached is not a fault: UNAVAILABLE, which the caller may retry (`databaseUnavailable`).
 */
export function unexpectedFault(log: ErrorLog, err: unknown, context: object = {}): ConnectError {
  const ref = randomUUID();
  if (databaseUnavailable(err)) {
    // An outage, not a bug: its reason without a stack, and an answer the caller may retry.
    log.error({ ...context, reason: reasonsOf(err), ref }, "request failed: the database cannot be reached");
    return errors.unavailable("DB-unr3", "the database cannot be reached: retry in a moment");
  }
  log.error({ ...context, err, ref }, "request failed on the server's side");
  const detail = { desc: ErrorInfoSchema, value: { reason: FAULT_REASON, domain: ERROR_DOMAIN, metadata: { reference: ref } } };
  return new ConnectError("internal error", Code.Internal, undefined, [detail]);
}

/** The reference an error of unexpectedFault carries, else undefined. */
export function referenceOf(err: ConnectError): string | undefined {
  return err.findDetails(ErrorInfoSchema).find((d) => d.reason === FAULT_REASON && d.domain === ERROR_DOMAIN)?.metadata.reference;
}

/**
 * The contract's status object of an error, as the REST gateway and the JSON-only routes answer it: the gRPC
 * code number, the message, and the details as google.rpc.Status JSON has them (`@type` and the fields).
 */
export function statusObjectOf(err: ConnectError): { code: Code; message: string; details: JsonValue[] } {
  return { code: err.code, message: err.rawMessage, details: err.details.map(detailJson) };
}

/**
 * A detail as google.rpc.Status's JSON has it (protojson's Any: `@type` and the message's fields), as
 * grpc-gateway writes it and as the import's own details are written (command/import/context.ts).
 */
function detailJson(d: ConnectError["details"][number]): JsonValue {
  if ("desc" in d) return { "@type": `type.googleapis.com/${d.desc.typeName}`, ...(toJson(d.desc, create(d.desc, d.value)) as JsonObject) };
  // a detail as the Connect protocol carried it (the REST gateway's call): decoded when its type is known here
  const desc = knownDetails.getMessage(d.type);
  if (desc) return { "@type": `type.googleapis.com/${d.type}`, ...(toJson(desc, fromBinary(desc, d.value)) as JsonObject) };
  return { "@type": `type.googleapis.com/${d.type}`, value: base64Encode(d.value) };
}

/** The error a Connect error body carries (the REST gateway's call), or UNKNOWN when the body is not one. */
export function errorOfConnectJson(body: Uint8Array): ConnectError {
  return errorFromJsonBytes(body, undefined, new ConnectError("", Code.Unknown));
}

/** The detail types this server attaches. */
const knownDetails = createRegistry(ErrorInfoSchema);

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
