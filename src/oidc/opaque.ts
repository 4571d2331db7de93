import { createCipheriv, createDecipheriv, createHmac } from "node:crypto";
import { randomBytesPooled } from "../crypto/random.js";

/**
 * Opaque access tokens carry their own claims, encrypted and authenticated (AES-256-GCM with a key derived
 * from the master key): issuing one writes nothing, and only the server can read one. Revocation is checked
 * separately (by `jti`). To a client they are 128+ bytes of random-looking base64url.
 */
export class OpaqueTokens {
  private readonly key: Buffer;

  constructor(masterKey: Buffer) {
    this.key = createHmac("sha256", masterKey).update("svc oidc opaque access tokens v1").digest();
  }

  seal(claims: Record<string, unknown>): string {
    const iv = randomBytesPooled(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const body = Buffer.concat([cipher.update(JSON.stringify(claims)), cipher.final()]);
    return Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64url");
  }

  /** The claims, or undefined when the token is not one of ours (or was tampered with). */
  open(token: string): Record<string, unknown> | undefined {
    if (!/^[A-Za-z0-9_-]{40,4096}$/.test(token)) return undefined;
    const raw = Buffer.from(token, "base64url");
    if (raw.length < 29) return undefined;
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(raw.length - 16));
      const plain = Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]);
      return JSON.parse(plain.toString()) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  }
}
