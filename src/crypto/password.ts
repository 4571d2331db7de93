import { pbkdf2, randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import { type ParsedHash, parameterProblem, parseHash } from "./hash-parameters.js";
import { verifyOnWorker } from "./hash-worker-pool.js";

/**
 * Password hashes. New passwords get scrypt (memory-hard, RFC 7914) from node:crypto: it runs on libuv's
 * thread pool, so a login never blocks the event loop (argon2 in JavaScript or WebAssembly would).
 * N = 2^15, r = 8, p = 1 takes 32 MiB and tens of milliseconds: the deliberate cost, measured in bench/.
 * SVC_PASSWORD_HASH_COST sets log2 N for the process (`setPasswordHashCost`, at start): the suite's servers use
 * 2^10, since thousands of sign-ins at the real cost made a third of its run time.
 *
 * Imported hashes are verified in the forms ZITADEL accepts, within cost limits (`hash-parameters.ts`),
 * and rehashed to the default on the next successful login (see `verifyPassword`'s `rehash`). bcrypt and argon2
 * are WebAssembly and run on worker threads (`hash-worker-pool.ts`).
 */
/** The built-in cost of new hashes (SVC_PASSWORD_HASH_COST's default). */
export const DEFAULT_PASSWORD_HASH_COST = 15;
/** New hashes' form; logN follows SVC_PASSWORD_HASH_COST (one value per process: its servers share the setting). */
const DEFAULT = { logN: DEFAULT_PASSWORD_HASH_COST, r: 8, p: 1, keyLen: 32 };

/** The cost of new hashes from now on, in this process; a stored hash of another cost is rehashed at its next sign-in. */
export function setPasswordHashCost(logN: number): void {
  DEFAULT.logN = logN;
  decoy = undefined;
}

export interface Verification {
  valid: boolean;
  /** True when the hash is valid but not in the current default form: hash the password again. */
  rehash: boolean;
}

function scryptKey(password: string, salt: Buffer, logN: number, r: number, p: number, keyLen: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, keyLen, { N: 2 ** logN, r, p, maxmem: 256 * 2 ** logN * r + 1024 }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

function pbkdf2Key(password: string, salt: Buffer, rounds: number, keyLen: number, digest: string): Promise<Buffer> {
  return new Promise((resolve, reject) => pbkdf2(password, salt, rounds, keyLen, digest, (err, key) => (err ? reject(err) : resolve(key))));
}

const same = (a: Buffer, b: Buffer) => a.length === b.length && a.length > 0 && timingSafeEqual(a, b);

/** `$scrypt$ln=15,r=8,p=1$<salt b64>$<hash b64>` (the passlib form). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const { logN, r, p, keyLen } = DEFAULT;
  const key = await scryptKey(password, salt, logN, r, p, keyLen);
  return `$scrypt$ln=${logN},r=${r},p=${p}$${salt.toString("base64")}$${key.toString("base64")}`;
}

/** Verified when there is nothing to verify against, so that such an attempt costs what a normal one does. */
let decoy: Promise<string> | undefined;
/** Stored hashes over the limits already warned about: one warning per hash, not one per login attempt. */
const warnedOverLimit = new Set<string>();

async function verifyParsed(password: string, h: ParsedHash): Promise<boolean> {
  switch (h.form) {
    case "scrypt":
      return same(await scryptKey(password, h.salt, h.logN, h.r, h.p, h.key.length || 1), h.key);
    case "pbkdf2":
      return h.digest !== undefined && same(await pbkdf2Key(password, h.salt, h.rounds, h.key.length, h.digest), h.key);
    // WebAssembly runs on the thread that calls it: on a worker's, never the event loop's.
    case "bcrypt":
      return verifyOnWorker({ algorithm: "bcrypt", password, hash: h.encoded });
    case "argon2":
      return verifyOnWorker({ algorithm: "argon2", password, hash: h.encoded });
  }
}

/** Checks a password against a stored hash in any supported form. Unknown forms never verify. */
export async function verifyPassword(password: string, encoded: string): Promise<Verification> {
  const parsed = parseHash(encoded);
  if (!parsed) return { valid: false, rehash: false };
  const problem = parameterProblem(parsed);
  if (problem) {
    // Stored before the limits (or written around the API's check): never verified, it could stall for minutes.
    if (problem.overLimit) await refuseOverLimit(password, encoded, problem.message);
    return { valid: false, rehash: false };
  }
  const valid = await verifyParsed(password, parsed).catch(() => false);
  return { valid, rehash: valid && !isDefaultForm(encoded) };
}

/** A wrong password, after a decoy verification of the default cost (the answer's timing shows nothing). */
async function refuseOverLimit(password: string, encoded: string, why: string): Promise<void> {
  if (!warnedOverLimit.has(encoded)) {
    if (warnedOverLimit.size >= 1000) warnedOverLimit.clear();
    warnedOverLimit.add(encoded);
    // A leaf module has no logger: Node's warning channel reaches stderr (and process.on("warning")).
    process.emitWarning(
      `a stored password hash is over the limits and is not verified; its user cannot sign in with it until the password is set again: ${why}`,
      {
        code: "SVC_PASSWORD_HASH_OVER_LIMIT",
      },
    );
  }
  await verifyDecoy(password);
}

/**
 * The time of one verification at the default cost, spent checking nothing: for an unknown user or client, one that
 * may not sign in, or a stored hash over the limits, so that the answer's timing does not tell these from a wrong
 * password or secret.
 */
export async function verifyDecoy(password: string): Promise<void> {
  decoy ??= hashPassword("decoy password");
  await verifyPassword(password, await decoy);
}

function isDefaultForm(encoded: string): boolean {
  const { logN, r, p } = DEFAULT;
  return encoded.startsWith(`$scrypt$ln=${logN},r=${r},p=${p}$`);
}

/** For import and API checks (with `isSupportedHash`): why a hash would not be verified, its cost limit named. */
export { hashParameterProblem } from "./hash-parameters.js";

/** The forms `verifyPassword` understands, for import validation: a clear error instead of a user who can never log in. */
export function isSupportedHash(encoded: string): boolean {
  return (
    /^\$scrypt\$ln=\d{1,2},r=\d{1,3},p=\d{1,3}\$[^$]+\$[^$]+$/.test(encoded) ||
    /^\$pbkdf2(-sha(1|224|256|384|512))?\$\d{1,8}\$[^$]+\$[^$]+$/.test(encoded) ||
    /^\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}$/.test(encoded) ||
    /^\$argon2(id|i|d)\$v=\d+\$m=\d+,t=\d+,p=\d+\$[^$]+\$[^$]+$/.test(encoded)
  );
}
