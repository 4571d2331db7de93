import { randomBytesPooled } from "./crypto/random.js";

let last = 0n;
/**
 * Resource IDs: decimal strings that grow with time (milliseconds << 16 plus randomness), so sorting by ID
 * follows creation order and IDs from several processes do not collide in practice.
 */
export function newId(): string {
  let id = (BigInt(Date.now()) << 16n) | BigInt(randomBytesPooled(2).readUInt16BE());
  if (id <= last) id = last + 1n;
  last = id;
  return id.toString();
}
