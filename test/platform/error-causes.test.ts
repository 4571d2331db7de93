import { describe, expect, it } from "vitest";
import { causesOf, reasonsOf } from "../../src/errors/causes.js";

/** What the logs say of an error that a library wrapped (openid-client, Prisma): its causes too. */
describe("an error's causes", () => {
  it("are listed outermost first, each message once, a thrown non-error included", () => {
    const reset = Object.assign(new Error("unreachable (read ECONNRESET)"), { code: "ECONNRESET" });
    const wrapped = new Error("something went wrong", { cause: reset });
    expect([...causesOf(wrapped)]).toEqual([wrapped, reset]);
    expect(reasonsOf(wrapped)).toBe("something went wrong: unreachable (read ECONNRESET)");
    expect(reasonsOf(new Error("outer", { cause: "a string" }))).toBe("outer: a string");
    expect(reasonsOf(undefined)).toBe("");
  });

  it("end after a few, however long the chain (a cycle included)", () => {
    const a = new Error("a");
    const b = new Error("b", { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect([...causesOf(a)]).toHaveLength(6);
  });
});
