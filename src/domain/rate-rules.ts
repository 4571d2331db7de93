/**
 * At most `limit` requests per fixed window of `windowS` seconds (request limits), or `limit` failures at once and
 * one more every windowS/limit seconds (failure limits); undefined: no limit.
 */
export interface RateRule {
  limit: number;
  windowS: number;
}

/** `<count>/<seconds>` (`100/60`) or `off`: the form of the SVC_RATE_LIMIT_* variables. Undefined for off; throws on anything else. */
export function parseRateRule(value: string): RateRule | undefined {
  if (value.trim().toLowerCase() === "off") return undefined;
  const m = /^\s*(\d{1,9})\s*\/\s*(\d{1,7})\s*$/.exec(value);
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) throw new Error(`must be <requests>/<seconds> (e.g. 100/60) or off, got "${value}"`);
  return { limit: Number(m[1]), windowS: Number(m[2]) };
}

/** The limits on failed attempts (SVC_RATE_LIMIT_*_FAILURES_*); a rule absent is off. */
export interface FailureRules {
  /** Failed sign-in steps (passwords, unknown login names, codes) per client address. */
  signInAddress?: RateRule | undefined;
  /** Failed passwords and codes per account. */
  signInAccount?: RateRule | undefined;
  /** Failed machine credentials (client secrets, unknown tokens and PATs) per client address. */
  tokenAddress?: RateRule | undefined;
}
