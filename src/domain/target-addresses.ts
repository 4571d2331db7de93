import { BlockList, isIP } from "node:net";
import { variable } from "../config/variables.js";

/**
 * Which addresses execution targets may not reach (issue 14: a target must not be turned against the server's
 * own network). SVC_TARGET_DENY is a comma-separated list of these names and of CIDR ranges or single
 * addresses (`10.1.0.0/16`, `192.0.2.7`, `fd00::/8`); `none` denies nothing.
 */
export const DENY_GROUPS: Record<string, readonly string[]> = {
  // the cloud metadata address 169.254.169.254 is one of these
  "link-local": ["169.254.0.0/16", "fe80::/10"],
  // 0.0.0.0 (and "this network") reach the local host on Linux, as does ::
  unspecified: ["0.0.0.0/8", "::/128"],
  loopback: ["127.0.0.0/8", "::1/128"],
  private: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7"],
};

/** The default lives once, with the variable (src/config/variables.ts): everything but public addresses. */
export const DEFAULT_TARGET_DENY = variable("SVC_TARGET_DENY")!.default!;

/** An address as it is checked: brackets removed, IPv4-mapped IPv6 (`::ffff:a9fe:a9fe`) as the IPv4 address it is. */
export function plainAddress(address: string): string {
  const a = address.replace(/^\[|\]$/g, "").toLowerCase();
  if (isIP(a) !== 6) return a;
  const dotted = /^(?:0{0,4}:){0,4}:?(?:0{0,4}:)?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (dotted) return dotted[1]!;
  const hex = /^(?:0{0,4}:){0,4}:?(?:0{0,4}:)?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(a);
  if (hex) {
    const hi = Number.parseInt(hex[1]!, 16);
    const lo = Number.parseInt(hex[2]!, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return a;
}

export class TargetAddressPolicy {
  /** One list per item of the spec, so that a refusal can name the item (`loopback`, `10.1.0.0/16`) that denies. */
  private readonly items: { item: string; list: BlockList }[] = [];

  /** `spec`: SVC_TARGET_DENY's value. Throws an Error naming the item that is neither a name nor an address range. */
  constructor(readonly spec: string = DEFAULT_TARGET_DENY) {
    const items = spec
      .split(",")
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean);
    for (const item of items) {
      if (item === "none") continue;
      const list = new BlockList();
      this.items.push({ item, list });
      for (const range of DENY_GROUPS[item] ?? [item]) {
        const [net, bits, extra] = range.split("/");
        const family = isIP(net ?? "");
        const prefix = bits === undefined ? (family === 4 ? 32 : 128) : Number(bits);
        if (!family || extra !== undefined || !/^\d+$/.test(String(prefix)) || prefix > (family === 4 ? 32 : 128)) {
          throw new Error(`"${item}" is neither ${Object.keys(DENY_GROUPS).join(", ")}, none, nor an address or CIDR range`);
        }
        list.addSubnet(net!, prefix, family === 4 ? "ipv4" : "ipv6");
      }
    }
  }

  /** Whether a connection to this IP address is refused. */
  denies(address: string): boolean {
    return this.deniedBy(address) !== undefined;
  }

  /** The item of SVC_TARGET_DENY that denies this IP address, if any. */
  deniedBy(address: string): string | undefined {
    const a = plainAddress(address);
    const family = isIP(a);
    if (!family) return undefined;
    return this.items.find((i) => i.list.check(a, family === 4 ? "ipv4" : "ipv6"))?.item;
  }

  /**
   * Why a denied address is refused, as the end of a sentence about it ("… 127.0.0.1, <refusal>"): the variable,
   * the item and the way out, since a refusal of a service beside the server is what a developer meets first.
   * The same words at creation and after DNS at a call. Undefined for an allowed address.
   */
  refusal(address: string): string | undefined {
    const item = this.deniedBy(address);
    if (item === undefined) return undefined;
    return `which is denied by SVC_TARGET_DENY (${item}); set SVC_TARGET_DENY=none or a narrower list for development`;
  }

  /**
   * What is wrong with a target URL before any DNS: only http and https, and a host written as an address
   * (in any form the URL parser accepts: `2852039166`, `0xa9.254.169.254`, `[::ffff:a9fe:a9fe]`) must not be
   * denied. A host name is checked after resolution, at each call. Undefined when acceptable.
   */
  urlProblem(url: string): string | undefined {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return "must be an absolute http or https URL";
    }
    if (u.protocol !== "http:" && u.protocol !== "https:") return `must be an http or https URL, not ${u.protocol.replace(/:$/, "")}`;
    if (u.username || u.password) return "must not carry a user name or password";
    return this.hostProblem(u.hostname);
  }

  /**
   * What is wrong with a host before any DNS: written as an address, in any form a URL's host takes
   * (`2852039166` is 169.254.169.254), it must not be denied. A name is checked after resolution.
   */
  hostProblem(hostname: string): string | undefined {
    let host = plainAddress(hostname);
    if (!isIP(host)) {
      try {
        host = plainAddress(new URL(`http://${hostname}/`).hostname);
      } catch {
        return undefined; // not a host a URL could name: the connection fails on its own
      }
    }
    const refusal = isIP(host) ? this.refusal(host) : undefined;
    return refusal ? `must not point at ${host}, ${refusal}` : undefined;
  }
}
