/** At most `limit` requests per fixed window of `windowS` seconds; undefined: no limit. */
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
