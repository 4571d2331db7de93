import { createHmac } from "node:crypto";
import { TargetAddressPolicy } from "../domain/target-addresses.js";
import { OutboundFailure as TargetFailure, OutboundHttp, type ResolveHost, systemResolve } from "../net/outbound-http.js";
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

/**
 * Calls targets: POST of the JSON payload with the signature header, bounded by the target's timeout, through
 * the checked outbound client (src/net/outbound-http.ts: SVC_TARGET_DENY at each call, after DNS). A hanging,
 * failing or babbling target only ever produces an error value here.
 */
export class TargetCaller {
  private readonly http: OutboundHttp;

  constructor(
    private readonly log: Logger,
    readonly policy: TargetAddressPolicy = new TargetAddressPolicy(),
    resolve: ResolveHost = systemResolve,
  ) {
    this.http = new OutboundHttp(policy, resolve);
  }

  /** Drops the kept-alive connections (at shutdown). */
  close(): void {
    this.http.close();
  }

  async call(t: CallableTarget, payload: unknown): Promise<string> {
    const body = JSON.stringify(payload);
    const headers = { "content-type": "application/json", "content-length": Buffer.byteLength(body), [SIGNATURE_HEADER]: signPayload(t.signingKey, body) };
    const { status, text } = await this.http.request(t.url, { method: "POST", headers, body, timeoutMs: t.timeoutMs, maxBytes: MAX_RESPONSE_BYTES });
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
