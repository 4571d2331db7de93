import { isIP } from "node:net";

/** Organisation domains: the rules every layer shares (commands, the validator, the configuration). */

export type ValidationType = "http" | "dns";

/** Where an organisation publishes a validation token (ZITADEL's `zitadel-challenge`, under our name). */
export const CHALLENGE_PATH = "/.well-known/svc-challenge/";
export const CHALLENGE_DNS_PREFIX = "_svc-challenge.";

export interface DomainValidationConfig {
  /** SVC_DOMAIN_VALIDATION_DNS: `address[:port]` of the DNS servers asked; empty: the system's. */
  dnsServers: string[];
  /** SVC_DOMAIN_VALIDATION_HTTP: the origin the file is fetched from, `{domain}` replaced (default `https://{domain}`). */
  httpOrigin: string;
}

/** What is wrong with SVC_DOMAIN_VALIDATION_HTTP, or undefined. */
export function httpOriginProblem(origin: string): string | undefined {
  if (!origin.includes("{domain}")) return "must contain {domain}";
  const sample = origin.replaceAll("{domain}", "example.com");
  if (!/^https?:\/\/[^/?#@]+$/.test(sample) || !URL.canParse(sample)) return "must be http(s)://{domain} with an optional :port and nothing after it";
  return undefined;
}

/** What is wrong with one SVC_DOMAIN_VALIDATION_DNS entry, or undefined. */
export function dnsServerProblem(server: string): string | undefined {
  const m = /^\[?([^\]]+?)\]?(?::(\d{1,5}))?$/.exec(server);
  if (!m || !isIP(m[1]!) || (m[2] !== undefined && Number(m[2]) > 65535)) return `"${server}" is not address[:port]`;
  return undefined;
}

/**
 * What is wrong with a domain an organisation adds, or undefined: a host name of at least two labels of letters,
 * digits and inner hyphens (an IDN in its xn-- form), at most 253 characters, not an address.
 */
export function domainNameProblem(domain: string): string | undefined {
  const d = domain.toLowerCase();
  if (d.length > 253) return "must be at most 253 characters";
  if (isIP(d)) return "must be a domain name, not an address";
  const labels = d.split(".");
  if (labels.length < 2) return `"${domain.slice(0, 100)}" is not a domain name (it needs at least two labels, e.g. example.com)`;
  const bad = labels.find((l) => !/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(l));
  if (bad !== undefined)
    return `"${domain.slice(0, 100)}" is not a domain name (label "${bad.slice(0, 63)}": letters, digits and inner hyphens, 1 to 63 of them)`;
  return undefined;
}
