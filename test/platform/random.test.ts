import { describe, expect, it } from "vitest";
import { randomBytesPooled } from "../../src/crypto/random.js";

describe("pooled randomness", () => {
  it("hands out bytes no other call got, each in a buffer of its own", () => {
    const seen = new Set<string>();
    // Several refills of the 4 KiB pool.
    for (let i = 0; i < 2_000; i++) {
      const b = randomBytesPooled(12);
      expect(b.length).toBe(12);
      const hex = b.toString("hex");
      expect(seen.has(hex)).toBe(false);
      seen.add(hex);
    }
    const a = randomBytesPooled(32);
    const copy = Buffer.from(a);
    a.fill(0);
    // Changing what one caller got changes nothing the next caller gets, and not the bytes handed out before.
    expect(randomBytesPooled(32).equals(Buffer.alloc(32))).toBe(false);
    expect(copy.equals(Buffer.alloc(32))).toBe(false);
  });

  it("serves large requests straight from the CSPRNG", () => {
    const big = randomBytesPooled(5_000);
    expect(big.length).toBe(5_000);
    expect(big.equals(Buffer.alloc(5_000))).toBe(false);
  });
});
