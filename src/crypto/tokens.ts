import { createHash, randomBytes } from "node:crypto";

/** A personal access token: 256 random bits; only its SHA-256 is stored. */
export function newPersonalAccessToken(): { token: string; hash: string } {
  const token = `pat_${randomBytes(32).toString("base64url")}`;
  return { token, hash: hashToken(token) };
}

/** High-entropy tokens need no slow hash: SHA-256 makes a stolen table useless and keeps lookups indexed. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/**
 * The bytes of a base64url string, or undefined unless it is their one canonical spelling: a decoder skips
 * characters outside the alphabet and the last character's unused bits, so several strings would otherwise
 * stand for one token, signature or proof.
 */
export function fromBase64url(text: string): Buffer | undefined {
  const bytes = Buffer.from(text, "base64url");
  return bytes.toString("base64url") === text ? bytes : undefined;
}
