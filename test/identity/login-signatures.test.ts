import { describe, expect, it } from "vitest";
import { fromBase64url } from "../../src/crypto/tokens.js";
import { Signer } from "../../src/login/signing.js";

// The login UI's CSRF tokens and signed proofs (src/login/signing.ts): one spelling each, nothing appended.
const signer = new Signer(Buffer.alloc(32, 7));
const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
/** Every other string that ends like `text` but with another last character. */
const otherEndings = (text: string) => [...alphabet].map((c) => text.slice(0, -1) + c).filter((t) => t !== text);

describe("base64url, canonical only", () => {
  it("decodes a canonical string and refuses other spellings of the same bytes", () => {
    const bytes = Buffer.alloc(32, 0xab);
    const text = bytes.toString("base64url");
    expect(fromBase64url(text)).toEqual(bytes);
    const sameBytes = otherEndings(text).filter((t) => Buffer.from(t, "base64url").equals(bytes));
    expect(sameBytes.length).toBe(3);
    for (const t of sameBytes) expect(fromBase64url(t)).toBeUndefined();
    for (const t of [`${text}=`, ` ${text}`, `${text.slice(0, 10)}.${text.slice(10)}`]) expect(fromBase64url(t)).toBeUndefined();
  });
});

describe("login signatures", () => {
  it("a CSRF token is valid for its cookie in its one spelling", () => {
    const token = signer.csrfToken("cookie-1");
    expect(signer.csrfValid("cookie-1", token)).toBe(true);
    expect(signer.csrfValid("cookie-2", token)).toBe(false);
    for (const t of otherEndings(token)) expect(signer.csrfValid("cookie-1", t)).toBe(false);
    expect(signer.csrfValid("cookie-1", `${token}=`)).toBe(false);
  });

  it("a sealed proof opens for its purpose until it expires, and not changed, re-spelt or extended", () => {
    const sealed = signer.seal("otp", { user: "u1" }, 60_000);
    expect(signer.open("otp", sealed)).toMatchObject({ user: "u1" });
    expect(signer.open("password-change", sealed)).toBeUndefined();
    for (const t of otherEndings(sealed)) expect(signer.open("otp", t)).toBeUndefined();
    expect(signer.open("otp", `${sealed}.x`)).toBeUndefined();
    expect(signer.open("otp", signer.seal("otp", { user: "u1" }, -1))).toBeUndefined();
  });
});
