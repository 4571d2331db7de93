import { causesOf } from "./causes.js";

/**
 * Whether an error says that the database cannot be reached now (it is down, restarting or failing over, or the
 * connection broke), rather than that a statement failed: the call may succeed if repeated, so it is answered
 * UNAVAILABLE (503, gRPC 14), not as a server fault. Looked for along the error's causes: Prisma's errors wrap
 * the driver's.
 */
export function databaseUnavailable(err: unknown): boolean {
  for (const e of causesOf(err)) {
    if (!e || typeof e !== "object") continue;
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === "string" && (PRISMA_UNREACHABLE.has(code) || SOCKET_FAILURES.has(code) || unavailableState(code))) return true;
    if (typeof message === "string" && DRIVER_MESSAGES.some((m) => message.includes(m))) return true;
  }
  return false;
}

/** Prisma's: cannot reach the server, timed out reaching it, operations timed out, closed the connection, no connection from the pool in time. */
const PRISMA_UNREACHABLE = new Set(["P1001", "P1002", "P1008", "P1017", "P2024"]);

/** A socket's to the database: refused, reset, cut, timed out, no route, no name (yet). */
const SOCKET_FAILURES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN"]);

/**
 * PostgreSQL's SQLSTATEs of a server going away or not there yet: class 08 (connection exception), 57P01 (the
 * administrator's shutdown), 57P02 (crash shutdown), 57P03 (starting up or shutting down), 53300 (too many
 * connections), 25006 (a read-only transaction: the server was a standby, a failover is under way), 57014 (a statement
 * cancelled: past the statement limit a transaction sets, `transactions.ts`, waiting for a lock).
 */
const unavailableState = (code: string) => /^08[0-9A-Z]{3}$/.test(code) || ["57P01", "57P02", "57P03", "53300", "25006", "57014"].includes(code);

/** node-postgres's own words for a connection that ended or never came, or a statement the server did not answer in time. */
const DRIVER_MESSAGES = ["Connection terminated", "timeout exceeded when trying to connect", "Client has encountered a connection error", "Query read timeout"];
