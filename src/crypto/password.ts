import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";

// scrypt is memory-hard and built into Node: N = 2^15, r = 8, p = 1 takes 32 MiB and tens of milliseconds.
const LOG_N = 15;
const R = 8;
const P = 1;
const KEY_LEN = 32;

function derive(password: string, salt: Buffer, logN: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, KEY_LEN, { N: 2 ** logN, r, p, maxmem: 256 * 2 ** logN * r }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** `$scrypt$ln=15,r=8,p=1$<salt b64>$<hash b64>` (the passlib form). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, LOG_N, R, P);
  return `$scrypt$ln=${LOG_N},r=${R},p=${P}$${salt.toString("base64")}$${key.toString("base64")}`;
}

export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const m = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([^$]+)\$([^$]+)$/.exec(encoded);
  if (!m) return false;
  const expected = Buffer.from(m[5]!, "base64");
  const key = await derive(password, Buffer.from(m[4]!, "base64"), Number(m[1]), Number(m[2]), Number(m[3]));
  return key.length === expected.length && timingSafeEqual(key, expected);
}
