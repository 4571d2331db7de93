import { createHash } from "node:crypto";
import type { RateRule } from "../domain/rate-rules.js";
import type { Database } from "../storage/database.js";

export interface RateVerdict {
  allowed: boolean;
  /** Seconds until the window ends (for Retry-After), at least 1. */
  retryAfterS: number;
}

/**
 * Request counts per key and fixed window, in the database so that every process serving the instance shares
 * them (issue 14: brute force on the token endpoint and the login forms). One statement per request: an
 * upsert that adds one to the window's row and returns the count, atomic under concurrency without a lock.
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
  async hit(key: string, rule: RateRule): Promise<RateVerdict> {
    const now = this.now();
    const windowMs = rule.windowS * 1000;
    const start = Math.floor(now / windowMs) * windowMs;
    const end = start + windowMs;
    // keys carry client IDs and addresses of any length: hashed when long, so the row stays small
    const k = key.length > 200 ? `h:${createHash("sha256").update(key).digest("base64url")}` : key;
    const rows = await this.db.prisma.$queryRaw<{ hits: number }[]>`
      INSERT INTO rate_limit_counts (key, window_start, expires_at, hits)
      VALUES (${k}, ${new Date(start)}, ${new Date(end)}, 1)
      ON CONFLICT (key, window_start) DO UPDATE SET hits = rate_limit_counts.hits + 1
      RETURNING hits`;
    if (++this.sinceCleanup >= 1000) {
      this.sinceCleanup = 0;
      void this.db.prisma.$executeRaw`DELETE FROM rate_limit_counts WHERE expires_at < ${new Date(now)}`.catch(() => {});
    }
    const hits = Number(rows[0]?.hits ?? 1);
    return { allowed: hits <= rule.limit, retryAfterS: Math.max(1, Math.ceil((end - now) / 1000)) };
  }

  /** Checks each (key, rule) in order; the first exceeded one wins. Every key is counted either way. */
  async check(hits: { key: string; rule: RateRule | undefined }[]): Promise<RateVerdict> {
    let verdict: RateVerdict = { allowed: true, retryAfterS: 0 };
    for (const h of hits) {
      if (!h.rule) continue;
      const v = await this.hit(h.key, h.rule);
      if (!v.allowed && verdict.allowed) verdict = v;
    }
    return verdict;
  }
}
