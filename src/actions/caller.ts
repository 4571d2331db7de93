import { createHmac } from "node:crypto";
import dns from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { plainAddress, TargetAddressPolicy } from "../domain/target-addresses.js";
import { errors } from "../errors/errors.js";
import type { CallableTarget } from "../query/actions.js";

export const SIGNATURE_HEADER = "svc-signature";
const MAX_RESPONSE_BYTES = 1024 * 1024;

/** `t=<unix seconds>,v1=<hex HMAC-SHA256(key, "<t>.<body>")>`: the receiver recomputes it to trust the payload. */
export function signPayload(key: string, body: string, now = Date.now()): string {
  const t = Math.floor(now / 1000);
  return `t=${t},v1=${createHmac("sha256", key).update(`${t}.${body}`).digest("hex")}`;
}

export interface Logger {
  warn(obj: object, msg: string): void;
}

class TargetFailure extends Error {}

/** Resolves a host name to its addresses (the seam tests point at names of their own). */
export type ResolveHost = (hostname: string) => Promise<{ address: string; family: number }[]>;

const systemResolve: ResolveHost = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/**
 * Calls targets: POST of the JSON payload with the signature header, bounded by the target's timeout.
 * A hanging, failing or babbling target only ever produces an error value here.
 *
 * Where it connects is checked at each call (SVC_TARGET_DENY, `TargetAddressPolicy`): an address in the URL
 * before connecting, a host name in the connection's own lookup, so that the address checked is the address
 * connected to (a name that resolved to an allowed address when the target was created, and to the metadata
 * address now, is refused: DNS rebinding). A name with any denied address is refused as a whole.
 */
export class TargetCaller {
  private readonly agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  private readonly lookup: LookupFunction;

  constructor(
    private readonly log: Logger,
    readonly policy: TargetAddressPolicy = new TargetAddressPolicy(),
    resolve: ResolveHost = systemResolve,
  ) {
    this.lookup = (hostname, options, callback) => {
      resolve(hostname).then(
        (found) => {
          const family = (options as { family?: number | string }).family;
          const wanted = found.filter((a) => !family || family === a.family || family === `IPv${a.family}`);
          const denied = wanted.find((a) => policy.denies(a.address));
          if (denied) {
            const err = new TargetFailure(`resolves to ${plainAddress(denied.address)}, a denied address (SVC_TARGET_DENY)`) as NodeJS.ErrnoException;
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

  /** Drops the kept-alive connections (at shutdown). */
  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  async call(t: CallableTarget, payload: unknown): Promise<string> {
    const problem = this.policy.urlProblem(t.url);
    if (problem) throw new TargetFailure(`is refused: its URL ${problem}`);
    const body = JSON.stringify(payload);
    const url = new URL(t.url);
    const secure = url.protocol === "https:";
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      let settled = false;
      const fail = (e: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.destroy();
        reject(e);
      };
      const timer = setTimeout(() => fail(new TargetFailure(`did not answer within ${t.timeoutMs} ms`)), t.timeoutMs);
      const req = (secure ? https : http).request(
        url,
        {
          method: "POST",
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), [SIGNATURE_HEADER]: signPayload(t.signingKey, body) },
          agent: secure ? this.agents.https : this.agents.http,
          lookup: this.lookup,
        },
        (res) => {
          // Redirects are not followed: a 3xx is an answer like any other that is not 2xx.
          const chunks: Buffer[] = [];
          let size = 0;
          res.on("data", (c: Buffer) => {
            size += c.byteLength;
            if (size > MAX_RESPONSE_BYTES) fail(new TargetFailure(`answered more than ${MAX_RESPONSE_BYTES} bytes`));
            else chunks.push(c);
          });
          res.on("error", (e) => fail(new TargetFailure(`broke off its answer (${e.message})`)));
          res.on("aborted", () => fail(new TargetFailure("broke off its answer")));
          res.on("end", () => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") });
          });
        },
      );
      req.on("error", (e) => fail(e instanceof TargetFailure ? e : new TargetFailure(`unreachable (${e.message})`)));
      req.end(body);
    });
    if (status < 200 || status > 299) throw new TargetFailure(`answered HTTP ${status}`);
    return text;
  }

  /**
   * Runs targets in order. `replaceKey` names the part of the payload a rest_request_response target's
   * answer replaces for the targets after it and for the caller; `accept` turns that answer into the
   * value (throwing if it is not one). is_async targets are fired and forgotten. A failure of an
   * interrupt_on_error target fails the whole chain (FAILED_PRECONDITION); other failures are logged and
   * the chain goes on. Returns the final value of `replaceKey`.
   */
  async runChain<T>(
    targets: CallableTarget[],
    payload: Record<string, unknown>,
    opts: { replaceKey?: string; accept?: (json: unknown) => T; failOnAnyError?: boolean } = {},
  ): Promise<{ value: unknown; replaced: boolean }> {
    const { replaceKey } = opts;
    let value: unknown = replaceKey ? payload[replaceKey] : undefined;
    let replaced = false;
    for (const t of targets) {
      const body = replaceKey ? { ...payload, [replaceKey]: value } : payload;
      if (t.isAsync) {
        this.call(t, body).catch((e) => this.log.warn({ target: t.id, reason: (e as Error).message }, "async execution target failed"));
        continue;
      }
      try {
        const text = await this.call(t, body);
        if (t.targetType === "rest_request_response" && replaceKey) {
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            throw new TargetFailure("answered with something that is not JSON");
          }
          try {
            value = opts.accept ? opts.accept(json) : json;
          } catch (e) {
            throw new TargetFailure(`answered with JSON that does not fit: ${(e as Error).message}`);
          }
          replaced = true;
        }
      } catch (e) {
        if (!(e instanceof TargetFailure)) throw e;
        if (t.interruptOnError || opts.failOnAnyError) {
          throw errors.failedPrecondition("EXEC-f41l", `execution target "${t.name}" failed: it ${e.message}`);
        }
        this.log.warn({ target: t.id, reason: e.message }, "execution target failed; continuing");
      }
    }
    return { value, replaced };
  }
}
