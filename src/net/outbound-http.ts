import dns from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import net, { type LookupFunction } from "node:net";
import { plainAddress, TargetAddressPolicy } from "../domain/target-addresses.js";

/**
 * HTTP requests the server makes to addresses its users chose (execution targets, organisation domain
 * validation): bounded in time and size, redirects not followed, and the address connected to checked against
 * SVC_TARGET_DENY in the connection's own lookup, so that a name that resolves to a denied address now (DNS
 * rebinding) is refused however it resolved before. A name with any denied address is refused as a whole.
 */

/** What went wrong, said as the end of a sentence about the address ("… it <message>"). */
export class OutboundFailure extends Error {}

/** Resolves a host name to its addresses (the seam tests and the domain-validation resolver plug in). */
export type ResolveHost = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const systemResolve: ResolveHost = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

export interface OutboundRequest {
  method: "GET" | "POST";
  headers?: Record<string, string | number>;
  body?: string;
  timeoutMs: number;
  maxBytes: number;
}

/**
 * A connection's lookup that refuses a name with any address the policy denies (for clients that connect through
 * Node's agents: this one, the S3 client of the export). The address checked is the address connected to.
 */
export function guardedLookup(policy: TargetAddressPolicy, resolve: ResolveHost = systemResolve): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (found) => {
        const family = (options as { family?: number | string }).family;
        const wanted = found.filter((a) => !family || family === a.family || family === `IPv${a.family}`);
        const denied = wanted.find((a) => policy.denies(a.address));
        if (denied) {
          const err = new OutboundFailure(`resolves to ${plainAddress(denied.address)}, a denied address (SVC_TARGET_DENY)`) as NodeJS.ErrnoException;
          return callback(err, "", 0);
        }
        if (!wanted.length) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "", 0);
        if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: typeof wanted) => void)(null, wanted);
        callback(null, wanted[0]!.address, wanted[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, "", 0),
    );
  };
}

export class OutboundHttp {
  private readonly agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  private readonly lookup: LookupFunction;

  constructor(
    readonly policy: TargetAddressPolicy = new TargetAddressPolicy(),
    resolve: ResolveHost = systemResolve,
  ) {
    this.lookup = guardedLookup(policy, resolve);
  }

  /**
   * A TCP connection under the same checks, for protocols other than HTTP (an instance's SMTP server): the
   * host, written as an address, must not be denied, and a name must not resolve to a denied address.
   */
  socket(host: string, port: number, timeoutMs: number): Promise<net.Socket> {
    const problem = this.policy.hostProblem(host);
    if (problem) return Promise.reject(new OutboundFailure(`is refused: its host ${problem}`));
    return new Promise((resolve, reject) => {
      const s = net.connect({ host, port, lookup: this.lookup, timeout: timeoutMs });
      const fail = (e: Error) => {
        s.destroy();
        reject(e instanceof OutboundFailure ? e : new OutboundFailure(`unreachable (${e.message})`));
      };
      const late = () => fail(new OutboundFailure(`did not answer within ${timeoutMs} ms`));
      s.once("timeout", late);
      s.once("error", fail);
      s.once("connect", () => {
        // From here on the socket is its user's, with its own timeouts and error handling.
        s.removeListener("error", fail);
        s.removeListener("timeout", late);
        s.setTimeout(0);
        resolve(s);
      });
    });
  }

  /** Drops the kept-alive connections (at shutdown). */
  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  /** The status and body of any answer; an OutboundFailure when there is none within the limits. */
  async request(target: string, r: OutboundRequest): Promise<{ status: number; text: string }> {
    const problem = this.policy.urlProblem(target);
    if (problem) throw new OutboundFailure(`is refused: its URL ${problem}`);
    const url = new URL(target);
    const secure = url.protocol === "https:";
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (e: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.destroy();
        reject(e);
      };
      const timer = setTimeout(() => fail(new OutboundFailure(`did not answer within ${r.timeoutMs} ms`)), r.timeoutMs);
      const req = (secure ? https : http).request(
        url,
        { method: r.method, headers: r.headers ?? {}, agent: secure ? this.agents.https : this.agents.http, lookup: this.lookup },
        (res) => {
          // Redirects are not followed: a 3xx is an answer like any other.
          const chunks: Buffer[] = [];
          let size = 0;
          res.on("data", (c: Buffer) => {
            size += c.byteLength;
            if (size > r.maxBytes) fail(new OutboundFailure(`answered more than ${r.maxBytes} bytes`));
            else chunks.push(c);
          });
          res.on("error", (e) => fail(new OutboundFailure(`broke off its answer (${e.message})`)));
          res.on("aborted", () => fail(new OutboundFailure("broke off its answer")));
          res.on("end", () => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") });
          });
        },
      );
      req.on("error", (e) => fail(e instanceof OutboundFailure ? e : new OutboundFailure(`unreachable (${e.message})`)));
      req.end(r.body);
    });
  }
}
