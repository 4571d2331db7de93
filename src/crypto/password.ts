import { pbkdf2, randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import { argon2Verify, bcryptVerify } from "hash-wasm";

/**
 * Password hashes. New passwords get scrypt (memory-hard, RFC 7914) from node:crypto: it runs on libuv's
 * thread pool, so a login never blocks the event loop (argon2 in JavaScript or WebAssembly would).
 * N = 2^15, r = 8, p = 1 takes 32 MiB and tens of milliseconds: the deliberate cost, measured in bench/.
 *
 * Imported hashes are verified in the forms the anchor product accepts, and rehashed to the default on
 * the next successful login (see `verifyPassword`'s `rehash`).
 */
const DEFAULT = { logN: 15, r: 8, p: 1, keyLen: 32 };

export interface Verification {
  valid: boolean;
  /** True when the hash is valid but not in the current default form: hash the password again. */
  rehash: boolean;
}

/** Standard base64 and passlib's "adapted base64" (`.` for `+`, no padding) alike. */
const b64 = (s: string) => Buffer.from(s.replace(/\./g, "+"), "base64");

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

const PBKDF2_DIGESTS: Record<string, string> = {
  pbkdf2: "sha1",
  "pbkdf2-sha1": "sha1",
  "pbkdf2-sha224": "sha224",
  "pbkdf2-sha256": "sha256",
  "pbkdf2-sha384": "sha384",
  "pbkdf2-sha512": "sha512",
};

type Verifier = (password: string, encoded: string) => Promise<boolean | undefined>;

/** Each verifier answers undefined when the encoded hash is not its form, so that the next one may try. */
const verifiers: Verifier[] = [
  async (password, encoded) => {
    const m = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,3}),p=(\d{1,3})\$([^$]+)\$([^$]+)$/.exec(encoded);
    if (!m) return undefined;
    const [logN, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
    if (logN < 1 || logN > 20 || r < 1 || p < 1 || p > 16) return false;
    const expected = b64(m[5]!);
    return same(await scryptKey(password, b64(m[4]!), logN, r, p, expected.length || 1), expected);
  },
  async (password, encoded) => {
    const m = /^\$(pbkdf2(?:-sha\d{1,3})?)\$(\d{1,8})\$([^$]+)\$([^$]+)$/.exec(encoded);
    if (!m) return undefined;
    const digest = PBKDF2_DIGESTS[m[1]!];
    const rounds = Number(m[2]);
    // The anchor's bounds: fewer rounds are not a password hash, more would let one import stall a login.
    if (!digest || rounds < 1000 || rounds > 10_000_000) return false;
    const expected = b64(m[4]!);
    if (expected.length === 0 || expected.length > 128) return false;
    return same(await pbkdf2Key(password, b64(m[3]!), rounds, expected.length, digest), expected);
  },
  async (password, encoded) => {
    const m = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/.exec(encoded);
    if (!m) return undefined;
    if (Number(m[1]) < 4 || Number(m[1]) > 17) return false;
    // $2a$, $2b$ and $2y$ differ only in how old implementations handled 8-bit characters.
    return bcryptVerify({ password, hash: encoded.replace(/^\$2[ay]\$/, "$2b$") });
  },
  async (password, encoded) => {
    if (!/^\$argon2(id|i|d)\$/.test(encoded)) return undefined;
    const m = /\$m=(\d+),t=(\d+),p=(\d+)\$/.exec(encoded);
    // Bounds keep one imported hash from taking more than 1 GiB or minutes.
    if (!m || Number(m[1]) > 1 << 20 || Number(m[2]) > 64 || Number(m[3]) > 16) return false;
    try {
      return await argon2Verify({ password, hash: encoded });
    } catch {
      return false;
    }
  },
];

/** Checks a password against a stored hash in any supported form. Unknown forms never verify. */
export async function verifyPassword(password: string, encoded: string): Promise<Verification> {
  for (const verify of verifiers) {
    const valid = await verify(password, encoded).catch(() => false);
    if (valid === undefined) continue;
    return { valid, rehash: valid && !isDefaultForm(encoded) };
  }
  return { valid: false, rehash: false };
}

function isDefaultForm(encoded: string): boolean {
  const { logN, r, p } = DEFAULT;
  return encoded.startsWith(`$scrypt$ln=${logN},r=${r},p=${p}$`);
}

/** The forms `verifyPassword` understands, for import validation: a clear error instead of a user who can never log in. */
export function isSupportedHash(encoded: string): boolean {
  return (
    /^\$scrypt\$ln=\d{1,2},r=\d{1,3},p=\d{1,3}\$[^$]+\$[^$]+$/.test(encoded) ||
    /^\$pbkdf2(-sha(1|224|256|384|512))?\$\d{1,8}\$[^$]+\$[^$]+$/.test(encoded) ||
    /^\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}$/.test(encoded) ||
    /^\$argon2(id|i|d)\$v=\d+\$m=\d+,t=\d+,p=\d+\$[^$]+\$[^$]+$/.test(encoded)
  );
}
