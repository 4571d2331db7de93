import { randomBytes } from "node:crypto";
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { join } from "node:path";
import { StartupError } from "../config/startup-error.js";
import { SecretBox } from "../crypto/secrets.js";
import type { Database } from "./database.js";

const VERIFIER_ID = 1;
const VERIFIER_TEXT = "svc master key verifier";

/**
 * The 32-byte key that encrypts secrets at rest, checked against the database before anything is served.
 *
 * SVC_MASTERKEY wins; else the key generated into the data directory (embedded database only: config refuses
 * DATABASE_URL without SVC_MASTERKEY). The database keeps a value sealed with the key it first got; a key that
 * cannot open it stops the start. A key is generated only for a database that holds nothing yet: a lost key
 * file is an error, never silently replaced (that would orphan every stored secret). Call it under the set-up
 * lock, so that processes starting together agree on one verifier.
 */
export async function loadMasterKey(db: Database, configured: string | undefined, dataDir: string): Promise<Buffer> {
  const keyFile = join(dataDir, "masterkey");
  const verifier = await db.prisma.masterKeyVerifier.findUnique({ where: { id: VERIFIER_ID } });
  const source = configured ? "SVC_MASTERKEY" : `the master key file ${keyFile}`;
  let key: Buffer;
  if (configured) key = Buffer.from(configured);
  else if (existsSync(keyFile)) key = readKeyFile(keyFile);
  else if (verifier || (await db.prisma.event.count({ take: 1 }))) {
    throw new StartupError(
      `the master key file ${keyFile} is missing but the database holds secrets sealed with it: restore the file, or set SVC_MASTERKEY to that key`,
    );
  } else key = writeNewKeyFile(dataDir, keyFile);

  const box = new SecretBox(key);
  const opens = (sealed: string) => {
    try {
      box.open(sealed);
      return true;
    } catch {
      return false;
    }
  };
  if (verifier) {
    if (!opens(verifier.sealed)) throw new StartupError(`${source} does not open this database's secrets: it is not the key they were sealed with`);
    return key;
  }
  // A database from before the verifier existed: one stored secret tells whether the key is right.
  const sample = await db.prisma.signingKey.findFirst({ select: { privateKey: true } });
  if (sample && !opens(sample.privateKey)) throw new StartupError(`${source} does not open this database's secrets: it is not the key they were sealed with`);
  await db.prisma.masterKeyVerifier.create({ data: { id: VERIFIER_ID, sealed: box.seal(VERIFIER_TEXT) } });
  return key;
}

/** True while the key opens the database's verifier: /readyz reports a server that cannot open its secrets. */
export async function masterKeyOpens(db: Database, box: SecretBox): Promise<boolean> {
  const verifier = await db.prisma.masterKeyVerifier.findUnique({ where: { id: VERIFIER_ID } });
  if (!verifier) return false;
  try {
    return box.open(verifier.sealed) === VERIFIER_TEXT;
  } catch {
    return false;
  }
}

function readKeyFile(path: string): Buffer {
  const key = Buffer.from(readFileSync(path, "utf8").trim(), "base64");
  if (key.length !== 32) throw new StartupError(`the master key file ${path} does not hold a 32-byte key`);
  return key;
}

/** Written to a side file, flushed and renamed: a crash leaves either no key file or a whole one. */
function writeNewKeyFile(dataDir: string, path: string): Buffer {
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32);
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, "w", 0o600);
  try {
    writeSync(fd, `${key.toString("base64")}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  return key;
}
