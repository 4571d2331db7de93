import { createCipheriv, createDecipheriv, createHmac, hash } from "node:crypto";
import { randomBytesPooled } from "../crypto/random.js";
import { fromBase64url } from "../crypto/tokens.js";

/**
 * Opaque access tokens carry their own claims, encrypted and authenticated (AES-256-GCM with a key derived
 * from the master key): issuing one writes nothing, and only the server can read one. Revocation is checked
 * separately (by `jti`). To a client they are 128+ bytes of random-looking base64url.
 */
export class OpaqueTokens {
  private readonly key: Buffer;
  /**
   * Tokens opened recently, by a SHA-256 of the whole token, so that no bearer token is kept: a resource
   * server introspects the same token on every call it serves, and the API verifier opens each one twice.
   * A token's claims never change (expiry, revocation and the session are checked by the caller each time);
   * opening one costs 15 µs here, the digest 2. Bounded: past `maxOpened` it starts again empty.
   */
  private readonly opened = new Map<string, Readonly<Record<string, unknown>>>();

  constructor(
    masterKey: Buffer,
    private readonly maxOpened = 10_000,
  ) {
    this.key = createHmac("sha256", masterKey).update("svc oidc opaque access tokens v1").digest();
  }

  seal(claims: Record<string, unknown>): string {
    const iv = randomBytesPooled(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const body = Buffer.concat([cipher.update(JSON.stringify(claims)), cipher.final()]);
    return Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64url");
  }

  /** The claims (shared: read-only), or undefined when the token is not one of ours (or was tampered with). */
  open(token: string): Readonly<Record<string, unknown>> | undefined {
    if (!/^[A-Za-z0-9_-]{40,4096}$/.test(token)) return undefined;
    const digest = hash("sha256", token, "base64url");
    const known = this.opened.get(digest);
    if (known) return known;
    const claims = this.decrypt(token);
    if (!claims) return undefined;
    if (this.opened.size >= this.maxOpened) this.opened.clear();
    this.opened.set(digest, claims);
    return claims;
  }

  private decrypt(token: string): Readonly<Record<string, unknown>> | undefined {
    const raw = fromBase64url(token);
    if (!raw || raw.length < 29) return undefined;
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(raw.length - 16));
      const plain = Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]);
      const claims: unknown = JSON.parse(plain.toString());
      if (!claims || typeof claims !== "object" || Array.isArray(claims)) return undefined;
      // Shared by every caller of the same token: frozen, with every list and object in it.
      return deepFreeze(claims as Record<string, unknown>);
    } catch {
      return undefined;
    }
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
