import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The 32-byte key that encrypts secrets at rest: SVC_MASTERKEY, else generated once into the data dir
 * (mode 0600) and read from there on every later start.
 */
export function loadMasterKey(configured: string | undefined, dataDir: string): Buffer {
  if (configured) return Buffer.from(configured);
  const path = join(dataDir, "masterkey");
  if (existsSync(path)) {
    const key = Buffer.from(readFileSync(path, "utf8").trim(), "base64");
    if (key.length !== 32) throw new Error(`${path} does not hold a 32-byte key`);
    return key;
  }
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32);
  writeFileSync(path, key.toString("base64") + "\n", { mode: 0o600 });
  chmodSync(path, 0o600);
  return key;
}
