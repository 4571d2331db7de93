import { describe, expect, it } from "vitest";
import { OpaqueTokens } from "../../src/oidc/opaque.js";

// Opaque access tokens: sealed claims, opened again on every introspection and API call (src/oidc/opaque.ts).
const claims = { iss: "https://id.example.com", sub: "u1", aud: ["api"], scope: "openid", iat: 1, exp: 2, jti: "j1", act: { sub: "a1", act: { sub: "a2" } } };

/** The token with the character at `i` replaced by another of the alphabet. */
const changedAt = (token: string, i: number) => token.slice(0, i) + (token[i] === "A" ? "B" : "A") + token.slice(i + 1);

describe("opaque access tokens", () => {
  it("open to their claims, the second time from memory, and the claims cannot be changed by a caller", () => {
    const tokens = new OpaqueTokens(Buffer.alloc(32, 1));
    const token = tokens.seal(claims);
    const first = tokens.open(token);
    expect(first).toEqual(claims);
    expect(tokens.open(token)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first?.aud)).toBe(true);
    const nested = (first?.act as { act?: object } | undefined)?.act;
    expect(nested).toEqual({ sub: "a2" });
    expect(Object.isFrozen(nested)).toBe(true);
    expect(() => ((first as Record<string, unknown>).sub = "forged")).toThrow();
  });

  it("refuse a token changed anywhere, also after the original was opened, and one sealed with another key", () => {
    const tokens = new OpaqueTokens(Buffer.alloc(32, 1));
    const token = tokens.seal(claims);
    expect(tokens.open(token)).toEqual(claims);
    for (const i of [0, 5, 16, Math.floor(token.length / 2), token.length - 20, token.length - 1]) {
      expect(tokens.open(changedAt(token, i)), `changed at ${i}`).toBeUndefined();
    }
    expect(tokens.open(token.slice(0, -1))).toBeUndefined();
    // The last character's unused bits: every other spelling of the same bytes is refused too.
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const others = [...alphabet].map((c) => token.slice(0, -1) + c).filter((t) => t !== token);
    expect(others.filter((t) => Buffer.from(t, "base64url").equals(Buffer.from(token, "base64url"))).length).toBeGreaterThan(0);
    for (const t of others) expect(tokens.open(t), t.slice(-1)).toBeUndefined();
    expect(new OpaqueTokens(Buffer.alloc(32, 2)).open(token)).toBeUndefined();
  });

  it("remember a bounded number of tokens, and keep no token itself", () => {
    const tokens = new OpaqueTokens(Buffer.alloc(32, 1), 3);
    const sealed = Array.from({ length: 10 }, (_, i) => tokens.seal({ ...claims, jti: `j${i}` }));
    for (const t of sealed) expect(tokens.open(t)?.jti).toBe(`j${sealed.indexOf(t)}`);
    const opened = (tokens as unknown as { opened: Map<string, unknown> }).opened;
    expect(opened.size).toBeLessThanOrEqual(3);
    for (const key of opened.keys()) expect(sealed).not.toContain(key);
  });
});
