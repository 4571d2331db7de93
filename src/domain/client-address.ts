import { isIP } from "node:net";
import { plainAddress } from "./target-addresses.js";

/**
 * The key a client address is limited under (security review, finding 20). An IPv4 address is one client, but
 * one IPv6 subscriber gets a whole /64 (RFC 6177) and can take a new address for every request: IPv6 addresses
 * count by their first 64 bits. IPv4-mapped IPv6 (`::ffff:192.0.2.1`, what a dual-stack socket reports) is the
 * IPv4 address it is.
 */
export function addressKey(ip: string): string {
  const a = plainAddress(ip.replace(/%.*$/, ""));
  if (isIP(a) !== 6) return a;
  return `${expandIPv6(a).slice(0, 4).join(":")}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, without leading zeros ("2001:db8::1" -> 2001, db8, 0, ... 1). */
function expandIPv6(a: string): string[] {
  const [head = "", tail] = a.split("::");
  const groups = (part: string) => (part ? part.split(":").flatMap(groupsOf) : []);
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const zeros = Array.from({ length: 8 - left.length - right.length }, () => "0");
  return [...left, ...zeros, ...right].map((g) => Number.parseInt(g, 16).toString(16));
}

/** A group, or the two groups a trailing dotted IPv4 part stands for. */
function groupsOf(part: string): string[] {
  if (!part.includes(".")) return [part];
  const [a = 0, b = 0, c = 0, d = 0] = part.split(".").map(Number);
  return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
}
