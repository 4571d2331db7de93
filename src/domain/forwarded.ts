import { BlockList, isIP } from "node:net";
import { plainAddress } from "./target-addresses.js";

/**
 * Who a request comes from, as far as the server may believe it (SVC_TRUSTED_PROXIES, contract "Deployment"):
 * the client's address (what limits, logs and the audit name), whether the client reached the server over https,
 * and the host it addressed. Behind trusted proxies these come from what the proxies forwarded; from anyone else
 * the forwarding headers are ignored.
 */
export interface Client {
  address: string;
  secure: boolean;
  host: string;
}

/**
 * Which headers the proxies write (SVC_TRUSTED_PROXIES_HEADER): one family only. Proxies pass on what the client
 * sent in the family they do not write, so a server reading both would believe a client's own `Forwarded` over
 * the proxy's `X-Forwarded-For`.
 */
export type ForwardedHeaders = "x-forwarded" | "forwarded";

export const forwardedHeaderFamilies: readonly ForwardedHeaders[] = ["x-forwarded", "forwarded"];

/** The peers believed about forwarding headers: addresses and CIDR ranges (SVC_TRUSTED_PROXIES); empty: nobody. */
export class TrustedProxies {
  private readonly list = new BlockList();
  readonly none: boolean;

  /** Throws an Error naming an item that is neither an address nor a CIDR range. */
  constructor(
    spec = "",
    readonly headers: ForwardedHeaders = "x-forwarded",
  ) {
    const items = spec
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    for (const item of items) {
      const [net, bits, extra] = item.split("/");
      const address = plainAddress(net ?? "");
      const family = isIP(address);
      const max = family === 4 ? 32 : 128;
      // the prefix as written: digits only ("10.0.0.1/" is not /0, nor "0x8" 8)
      if (!family || extra !== undefined || (bits !== undefined && !/^\d{1,3}$/.test(bits)) || Number(bits ?? max) > max) {
        throw new Error(`"${item}" is neither an address nor a CIDR range`);
      }
      this.list.addSubnet(address, Number(bits ?? max), family === 4 ? "ipv4" : "ipv6");
    }
    this.none = items.length === 0;
  }

  trusts(address: string): boolean {
    if (this.none) return false;
    const a = plainAddress(address);
    const family = isIP(a);
    return family !== 0 && this.list.check(a, family === 4 ? "ipv4" : "ipv6");
  }
}

/** One hop a proxy reports: the address it received the request from, and what that request said. */
interface Hop {
  for?: string;
  proto?: string;
  host?: string;
}

type Headers = Record<string, string | string[] | undefined>;

const single = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(",") : v);

/**
 * The request's client: its socket's peer, unless the peer is a trusted proxy; then the nearest address in the
 * forwarded chain that is not a trusted proxy (walking from the peer towards the client), with the scheme and
 * host the nearest trusted proxy (the peer) reports. The headers of the one family the proxies write:
 * `X-Forwarded-For`, `-Proto` and `-Host`, or `Forwarded` (RFC 7239). A chain of trusted proxies only ends at its
 * first address.
 */
export function resolveClient(peer: { address: string; encrypted: boolean; host: string }, headers: Headers, trusted: TrustedProxies): Client {
  const direct: Client = { address: plainAddress(peer.address), secure: peer.encrypted, host: peer.host };
  if (!trusted.trusts(peer.address)) return direct;
  const hops = trusted.headers === "forwarded" ? forwardedElements(headers) : xForwardedHops(headers);
  if (!hops.length) return direct;
  let address = direct.address;
  for (let i = hops.length - 1; i >= 0; i--) {
    if (!trusted.trusts(address)) break;
    const next = hops[i]!.for;
    // "unknown", an obfuscated name or nothing: the chain says no more; the last address known stands
    if (!next || !isIP(next)) break;
    address = next;
  }
  // What the peer itself appended: the last element. Earlier ones are other hops' words, a client's included.
  const proto = hops[hops.length - 1]!.proto?.toLowerCase();
  const host = hops[hops.length - 1]!.host;
  return {
    address,
    secure: proto === undefined ? peer.encrypted : proto === "https",
    host: host && /^[A-Za-z0-9.:[\]-]{1,300}$/.test(host) ? host : peer.host,
  };
}

/** The hops of `Forwarded`, client first. */
function forwardedElements(headers: Headers): Hop[] {
  const forwarded = single(headers.forwarded);
  return forwarded ? forwarded.split(",").map(parseForwardedElement) : [];
}

/** The hops of `X-Forwarded-For`, client first; the last (the peer's own statement) with `-Proto` and `-Host`. */
function xForwardedHops(headers: Headers): Hop[] {
  const fors = (single(headers["x-forwarded-for"]) ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const hops: Hop[] = fors.map((f) => ({ for: nodeAddress(f) }));
  const proto = single(headers["x-forwarded-proto"])?.split(",").pop()?.trim();
  const host = single(headers["x-forwarded-host"])?.split(",").pop()?.trim();
  if (proto || host) {
    if (!hops.length) hops.push({});
    Object.assign(hops[hops.length - 1]!, proto ? { proto } : {}, host ? { host } : {});
  }
  return hops;
}

/** One element of `Forwarded`: `for=…;proto=…;host=…`, values possibly quoted. */
function parseForwardedElement(element: string): Hop {
  const hop: Hop = {};
  for (const pair of element.split(";")) {
    const eq = pair.indexOf("=");
    if (eq < 0) continue;
    const key = pair.slice(0, eq).trim().toLowerCase();
    const value = pair
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, "$1");
    if (key === "for") hop.for = nodeAddress(value);
    else if (key === "proto" || key === "host") hop[key] = value;
  }
  return hop;
}

/** The address of a node (RFC 7239 §6): `192.0.2.7`, `192.0.2.7:4711`, `[2001:db8::1]:4711`; other forms as given. */
function nodeAddress(node: string): string {
  const v = node.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(v);
  if (bracketed) return plainAddress(bracketed[1]!);
  const v4port = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(v);
  return plainAddress(v4port ? v4port[1]! : v);
}
