import { Resolver } from "node:dns/promises";
import { isIP } from "node:net";
import { CHALLENGE_DNS_PREFIX, CHALLENGE_PATH, type DomainValidationConfig, type ValidationType } from "../domain/org-domains.js";
import type { TargetAddressPolicy } from "../domain/target-addresses.js";
import { OutboundFailure, OutboundHttp, type ResolveHost, systemResolve } from "./outbound-http.js";

/** At most this much of what was found goes into a failure's reason. */
const shown = (s: string) => JSON.stringify(s.length > 80 ? `${s.slice(0, 80)}…` : s);

/**
 * Looks for an organisation's validation token: the body of `<origin>/.well-known/svc-challenge/<token>.txt`, or a
 * TXT record at `_svc-challenge.<domain>`. Both honour the configuration (the DNS servers also resolve the host
 * of the HTTP check), so that tests and closed networks can use servers of their own; the HTTP check goes through
 * the checked outbound client (SVC_TARGET_DENY, no redirects, 5 s, 4 KiB).
 */
export class DomainValidator {
  private readonly resolver: Resolver;
  private readonly http: OutboundHttp;

  constructor(
    private readonly config: DomainValidationConfig,
    policy: TargetAddressPolicy,
  ) {
    this.resolver = new Resolver({ timeout: 3000, tries: 2 });
    if (config.dnsServers.length) this.resolver.setServers(config.dnsServers);
    const resolve: ResolveHost = config.dnsServers.length ? (host) => this.addresses(host) : systemResolve;
    this.http = new OutboundHttp(policy, resolve);
  }

  close(): void {
    this.http.close();
  }

  url(domain: string, token: string): string {
    return `${this.config.httpOrigin.replaceAll("{domain}", domain)}${CHALLENGE_PATH}${token}.txt`;
  }

  dnsName(domain: string): string {
    return `${CHALLENGE_DNS_PREFIX}${domain}`;
  }

  /** Undefined when the token is where `type` says; else what was found instead, as a sentence. */
  async problem(type: ValidationType, domain: string, token: string): Promise<string | undefined> {
    return type === "http" ? this.httpProblem(domain, token) : this.dnsProblem(domain, token);
  }

  private async httpProblem(domain: string, token: string): Promise<string | undefined> {
    const url = this.url(domain, token);
    try {
      const { status, text } = await this.http.request(url, { method: "GET", timeoutMs: 5000, maxBytes: 4096 });
      if (status !== 200) return `${url} answered HTTP ${status}`;
      return text.trim() === token ? undefined : `${url} does not hold the token (it holds ${shown(text.trim())})`;
    } catch (e) {
      if (e instanceof OutboundFailure) return `${url} ${e.message}`;
      throw e;
    }
  }

  private async dnsProblem(domain: string, token: string): Promise<string | undefined> {
    const name = this.dnsName(domain);
    let records: string[];
    try {
      records = (await this.resolver.resolveTxt(name)).map((chunks) => chunks.join(""));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOTFOUND" || code === "ENODATA") return `there is no TXT record at ${name}`;
      return `the TXT records at ${name} could not be read (${code ?? (e as Error).message})`;
    }
    if (records.some((r) => r.trim() === token)) return undefined;
    return `no TXT record at ${name} holds the token (found ${records.map(shown).join(", ") || "none"})`;
  }

  /** A host's addresses from the configured DNS servers (A and AAAA). */
  private async addresses(host: string): Promise<{ address: string; family: number }[]> {
    if (isIP(host)) return [{ address: host, family: isIP(host) }];
    const [v4, v6] = await Promise.all([this.resolver.resolve4(host).catch(() => []), this.resolver.resolve6(host).catch(() => [])]);
    return [...v4.map((address) => ({ address, family: 4 })), ...v6.map((address) => ({ address, family: 6 }))];
  }
}
