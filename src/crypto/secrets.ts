import { createCipheriv, createDecipheriv } from "node:crypto";
import { randomBytesPooled } from "./random.js";

/** Encrypts secrets at rest with the master key: AES-256-GCM, `v1.<base64url iv|tag|ciphertext>`. */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error("the master key must be 32 bytes");
  }

  seal(plaintext: string): string {
    const iv = randomBytesPooled(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return `v1.${Buffer.concat([iv, cipher.getAuthTag(), ct]).toString("base64url")}`;
  }

  open(sealed: string): string {
    if (!sealed.startsWith("v1.")) throw new Error("unknown secret format");
    const raw = Buffer.from(sealed.slice(3), "base64url");
    const decipher = createDecipheriv("aes-256-gcm", this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
  }
}
