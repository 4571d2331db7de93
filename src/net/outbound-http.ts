import dns from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import net, { type LookupFunction } from "node:net";
import { plainAddress, TargetAddressPolicy } from "../domain/target-addresses.js";

/**
 * Every connection the server makes to an address its users chose goes out here, under one policy
 * (SVC_TARGET_DENY, by default everything but public addresses):
 * - `OutboundHttp.request`: execution targets (src/actions/caller.ts), SMS providers (HTTP and Twilio,
 *   src/notification/senders.ts), organisation domain validation (src/net/domain-validation.ts);
 * - `OutboundHttp.socket`: an instance's SMTP server (nodemailer's socket, src/notification/senders.ts);
 * - `OutboundHttp.address`: LDAP directories (ldapts connects by itself to the address checked, src/federation/ldap.ts);
 * - `guardedAgents`: the S3 endpoint of an export or import (the AWS SDK's agents, src/storage/object-storage.ts);
 * - `outboundFetch`: external identity providers (openid-client's `customFetch`, src/federation).
 * A host written as an address is checked before anything is sent; a name is checked in the connection's own
 * lookup, so that a name that resolves to a denied address now (DNS rebinding) is refused however it resolved
 * before, and the socket connects to exactly the address checked. Requests are bounded in time and size and
 * follow no redirect. What is not here connects only where the operator said (SVC_SMTP_URL, DATABASE_URL,
 * OTEL_*, STORAGE_EMULATOR_HOST) or to Google's fixed GCS endpoints; docs/drafts/outbound.md lists them.
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
        // A name with any denied address is refused as a whole: the connection may try any of its addresses.
        for (const a of wanted) {
          const refusal = policy.refusal(a.address);
          if (refusal) return callback(new OutboundFailure(`resolves to ${plainAddress(a.address)}, ${refusal}`) as NodeJS.ErrnoException, "", 0);
        }
        if (!wanted.length) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "", 0);
        if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: typeof wanted) => void)(null, wanted);
        callback(null, wanted[0]!.address, wanted[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, "", 0),
    );
  };
}

/**
 * Node agents whose connections take the guarded lookup, for clients that bring their own HTTP stack (the AWS
 * SDK): the caller checks an address written in the URL first (`policy.urlProblem`), the agents check names.
 * Fresh agents per client, since such a client destroys its agents with itself.
 */
export function guardedAgents(policy: TargetAddressPolicy, resolve: ResolveHost = systemResolve): { httpAgent: http.Agent; httpsAgent: https.Agent } {
  const lookup = guardedLookup(policy, resolve);
  return { httpAgent: new http.Agent({ lookup } as http.AgentOptions), httpsAgent: new https.Agent({ lookup } as https.AgentOptions) };
}

/**
 * How long a kept-alive connection may wait for its next request. An agent without a timeout keeps idle sockets
 * for good and ignores the server's `Keep-Alive: timeout=` hint, so the next request after a server's own idle
 * timeout (Node's 5 s, nginx's 75 s) races its close. With one, Node drops an idle socket at the shorter of this and
 * the hint less a second.
 */
const IDLE_SOCKET_MS = 4_000;

/**
 * An error of a GET sent on a kept-alive socket that the server closed as the request went out, most likely at
 * its idle timeout: a fresh connection may send it again (Node's documented remedy, `reusedSocket`). Only a GET:
 * a reset says no answer came, not that nothing was received, and a POST (a webhook, an SMS, a one-time code)
 * must not run twice.
 */
function closedWhileIdle(req: http.ClientRequest, e: NodeJS.ErrnoException): boolean {
  return req.method === "GET" && req.reusedSocket && (e.code === "ECONNRESET" || e.code === "EPIPE");
}

export class OutboundHttp {
  private readonly agents = {
    http: new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
    https: new https.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
  };
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

  /**
   * The address a client that opens its own connections (LDAP) connects to for `host`: checked as `socket` checks
   * it, so that the connection goes to exactly the address the policy allowed.
   */
  address(host: string): Promise<string> {
    const problem = this.policy.hostProblem(host);
    if (problem) return Promise.reject(new OutboundFailure(`is refused: its host ${problem}`));
    return new Promise((resolve, reject) =>
      this.lookup(host, {}, (e, address) =>
        e ? reject(e instanceof OutboundFailure ? e : new OutboundFailure(`unreachable (${e.message})`)) : resolve(address as string),
      ),
    );
  }

  /** Drops the kept-alive connections (at shutdown). */
  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  /** The status and body of any answer; an OutboundFailure when there is none within the limits. */
  async request(target: string, r: OutboundRequest): Promise<{ status: number; text: string; headers: http.IncomingHttpHeaders }> {
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
      let req: http.ClientRequest;
      let responded = false;
      const send = (agent: http.Agent | false) => {
        req = (secure ? https : http).request(url, { method: r.method, headers: r.headers ?? {}, agent, lookup: this.lookup }, answered);
        req.on("error", (e: NodeJS.ErrnoException) => {
          // Once, on a connection of its own, within the same time limit.
          if (agent && !responded && !settled && closedWhileIdle(req, e)) return send(false);
          fail(e instanceof OutboundFailure ? e : new OutboundFailure(`unreachable (${e.message})`));
        });
        req.end(r.body);
      };
      const answered = (res: http.IncomingMessage) => {
        responded = true;
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
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8"), headers: res.headers });
        });
      };
      send(secure ? this.agents.https : this.agents.http);
    });
  }
}

/**
 * A `fetch` over `OutboundHttp.request`, for libraries that take one (openid-client's `customFetch`): the same
 * policy, time and size limits, no redirect followed. Only what such libraries send: a string or form body.
 */
export function outboundFetch(out: OutboundHttp, limits: { timeoutMs: number; maxBytes: number }) {
  return async (url: string, init: { method?: string; headers?: HeadersInit; body?: unknown }): Promise<Response> => {
    const method = (init.method ?? "GET").toUpperCase();
    if (method !== "GET" && method !== "POST") throw new OutboundFailure(`cannot send a ${method} request`);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => {
      headers[k] = v;
    });
    const body = init.body === undefined || init.body === null ? undefined : String(init.body);
    if (body !== undefined) headers["content-length"] = String(Buffer.byteLength(body));
    const answer = await out.request(url, { method, headers, ...(body !== undefined ? { body } : {}), ...limits });
    const responseHeaders = new Headers();
    for (const [k, v] of Object.entries(answer.headers)) {
      if (v !== undefined) responseHeaders.set(k, Array.isArray(v) ? v.join(", ") : v);
    }
    // A status fetch cannot represent (below 200) is the provider's fault: a bad gateway for the caller.
    const status = answer.status >= 200 && answer.status <= 599 ? answer.status : 502;
    return new Response([101, 204, 205, 304].includes(status) ? null : answer.text, { status, headers: responseHeaders });
  };
}
