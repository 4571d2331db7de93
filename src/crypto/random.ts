import { randomFillSync } from "node:crypto";

// One call into the CSPRNG per 4 KiB instead of one per ID, IV or token: each synchronous randomBytes call
// costs far more than the bytes it returns (the profile of the token endpoints showed ~5 % there).
const POOL_SIZE = 4096;
const pool = Buffer.alloc(POOL_SIZE);
let offset = POOL_SIZE;

/**
 * `n` bytes from the operating system's CSPRNG, handed out from a pool filled in bulk. Each call gets bytes
 * no other call got, in a buffer of its own (a copy, so a caller that keeps or changes it cannot touch the pool).
 */
export function randomBytesPooled(n: number): Buffer {
  if (n > POOL_SIZE / 4) return randomFillSync(Buffer.alloc(n));
  if (offset + n > POOL_SIZE) {
    randomFillSync(pool);
    offset = 0;
  }
  const out = Buffer.from(pool.subarray(offset, offset + n));
  // Spent bytes are cleared, so the pool never holds what it has already handed out.
  pool.fill(0, offset, offset + n);
  offset += n;
  return out;
}
