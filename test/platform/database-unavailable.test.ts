import { describe, expect, it } from "vitest";
import { databaseUnavailable } from "../../src/errors/database-unavailable.js";

/** Which errors mean "the database cannot be reached now" (UNAVAILABLE) and which a failed statement (a fault). */
describe("a database that cannot be reached", () => {
  const pgError = (code: string, message = "x") => Object.assign(new Error(message), { code });

  it("is told by PostgreSQL's states, the socket's codes, node-postgres's words and Prisma's codes, along the causes", () => {
    for (const e of [
      pgError("57P01", "terminating connection due to administrator command"),
      pgError("57P03", "the database system is starting up"),
      pgError("08006"),
      pgError("53300", "sorry, too many clients already"),
      pgError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:5432"),
      new Error("Connection terminated unexpectedly"),
      new Error("timeout exceeded when trying to connect"),
      pgError("P1001", "Can't reach database server"),
      new Error("wrapped", { cause: new Error("again", { cause: pgError("57P01") }) }),
      // Prisma's error for a statement inside a transaction whose connection the server ended (a crash)
      Object.assign(pgError("P2039", "Invalid `tx.org.create()` invocation"), {
        meta: { driverAdapterError: { name: "DriverAdapterError", cause: { kind: "postgres", code: "57P01", originalCode: "57P01" } } },
      }),
    ]) {
      expect(databaseUnavailable(e), `${(e as { code?: string }).code} ${e.message}`).toBe(true);
    }
  });

  it("is not a statement that failed, a bug, or nothing", () => {
    for (const e of [
      pgError("23505", "duplicate key value"),
      pgError("42P01", "relation does not exist"),
      pgError("P2002"),
      new TypeError("x is undefined"),
      undefined,
      "text",
    ]) {
      expect(databaseUnavailable(e), String(e)).toBe(false);
    }
  });
});
