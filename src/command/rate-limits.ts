import { createHash } from "node:crypto";
import type { RateRule } from "../domain/rate-rules.js";
import type { Database } from "../storage/database.js";

export interface RateVerdict {
  allowed: boolean;
  /** Seconds until the window ends (for Retry-After), at least 1. */
  retryAfterS: number;
}

const ALLOWED: RateVerdict = { allowed: true, retryAfterS: 0 };

/**
 * Adds one to each key's row of its current window and returns the counts: atomic under concurrency without a
 * lock, and one round trip however many keys a request counts under (the token endpoint counts two).
 */
const COUNT = `
  INSERT INTO rate_limit_counts (key, window_start, expires_at, hits)
  SELECT key, window_start, expires_at, 1 FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[]) AS t(key, window_start, expires_at)
  ON CONFLICT (key, window_start) DO UPDATE SET hits = rate_limit_counts.hits + 1
  RETURNING key, hits`;

/**
 * Request counts per key and fixed window, in the database so that every process serving the instance shares
 * them (issue 14: brute force on the token endpoint and the login forms). One statement per request.
 * Like the replay guard, not an event: a count changes no resource and is worthless after its window.
 * Rows of ended windows are deleted now and then by whichever process counts.
 */
export class RateLimiter {
  private sinceCleanup = 0;

  constructor(
    private readonly db: Database,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one request under `key` and says whether it is within `rule`. */
  hit(key: string, rule: RateRule): Promise<RateVerdict> {
    return this.check([{ key, rule }]);
  }

  /**
   * Counts one request under each key that has a rule and says whether all are within their rules; when
   * several are exceeded, the first one's window decides Retry-After. Every key is counted either way, once
   * (a key named twice counts once, under its first rule).
   */
  async check(hits: { key: string; rule: RateRule | undefined }[]): Promise<RateVerdict> {
    const now = this.now();
    const counted = new Map<string, { rule: RateRule; start: number; end: number }>();
    for (const { key, rule } of hits) {
      if (!rule) continue;
      // keys carry client IDs and addresses of any length: hashed when long, so the row stays small
      const k = key.length > 200 ? `h:${createHash("sha256").update(key).digest("base64url")}` : key;
      if (counted.has(k)) continue;
      const windowMs = rule.windowS * 1000;
      const start = Math.floor(now / windowMs) * windowMs;
      counted.set(k, { rule, start, end: start + windowMs });
    }
    if (counted.size === 0) return ALLOWED;
    const windows = [...counted.values()];
    const { rows } = await this.db.pool.query<{ key: string; hits: number }>(COUNT, [
      [...counted.keys()],
      windows.map((w) => new Date(w.start)),
      windows.map((w) => new Date(w.end)),
    ]);
    if (++this.sinceCleanup >= 1000) {
      this.sinceCleanup = 0;
      void this.db.pool.query("DELETE FROM rate_limit_counts WHERE expires_at < $1", [new Date(now)]).catch(() => {});
    }
    const counts = new Map(rows.map((r) => [r.key, Number(r.hits)]));
    for (const [k, w] of counted) {
      if ((counts.get(k) ?? 1) > w.rule.limit) return { allowed: false, retryAfterS: Math.max(1, Math.ceil((w.end - now) / 1000)) };
    }
    return ALLOWED;
  }
}
