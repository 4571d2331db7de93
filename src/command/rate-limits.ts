import { type Clock, systemClock } from "../domain/clock.js";
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
 * Adds each key's number to its row of the window and returns the counts: atomic under concurrency without a
 * lock, and one round trip however many keys a request counts under (the token endpoint counts two).
 */
const COUNT = `
  INSERT INTO rate_limit_counts (key, window_start, expires_at, hits)
  SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[], $4::int[])
  ON CONFLICT (key, window_start) DO UPDATE SET hits = rate_limit_counts.hits + EXCLUDED.hits
  RETURNING key, hits`;

/** A window counted locally first is flushed to the database this often. */
const FLUSH_MS = 100;
/**
 * Requests are counted locally (and flushed every FLUSH_MS) only while more than this many remain below the
 * limit, as far as this process knows: a rule up to this size is counted exactly, in the database, request by
 * request.
 */
const LOCAL_HEADROOM = 1000;
/** Windows remembered per process; past it, the least useful are forgotten (the database has their counts). */
const MAX_WINDOWS = 10_000;

/** What this process knows of one key's current window. */
interface KeyWindow {
  rule: RateRule;
  end: number;
  start: number;
  /** The database's count at its last answer. */
  known: number;
  /** Requests counted here and not yet sent to the database. */
  pending: number;
  /** Requests sent to the database and not yet answered. */
  sent: number;
}

/** Requests of a key's window to add to the database. */
interface Counted {
  key: string;
  window: KeyWindow;
  n: number;
}

const over = (w: KeyWindow) => w.known > w.rule.limit;

/**
 * Request counts per key and fixed window, in the database so that every process serving the instance shares
 * them (issue 14: brute force on the token endpoint and the login forms). A request under the limit is counted
 * in the database before it is answered, one statement for all its keys, so a rule like the default 100 a
 * minute holds exactly across processes. Two things keep the database out of the hot path:
 * - a window over its limit stays over it until it ends (counts only grow): once a process has seen that, it
 *   refuses requests under that key without asking again and without counting them (a flood costs nothing);
 * - while a large limit (raised for a busy client) is far away, requests are counted here and added to the
 *   database every FLUSH_MS: other processes' counts are then up to FLUSH_MS old, irrelevant that far below.
 * Like the replay guard, not an event: a count changes no resource and is worthless after its window.
 * Rows of ended windows are deleted now and then by whichever process counts.
 */
export class RateLimiter {
  private readonly windows = new Map<string, KeyWindow>();
  private flushing: NodeJS.Timeout | undefined;
  private closed = false;
  private sinceCleanup = 0;

  constructor(
    private readonly db: Database,
    /** The server's clock (src/domain/clock.ts): windows start and end on it. */
    private readonly clock: Clock = systemClock,
  ) {}

  /** Counts one request under `key` and says whether it is within `rule`. */
  hit(key: string, rule: RateRule): Promise<RateVerdict> {
    return this.check([{ key, rule }]);
  }

  /**
   * Counts one request under each key that has a rule and says whether all are within their rules; when
   * several are exceeded, Retry-After is the longest wait. A key named twice counts once, under its first rule.
   * A request under a key known to be over its limit is refused at once and counted under none of its keys.
   */
  async check(hits: { key: string; rule: RateRule | undefined }[]): Promise<RateVerdict> {
    const now = this.clock.now();
    const request = new Map<string, KeyWindow>();
    for (const { key, rule } of hits) {
      if (!rule) continue;
      const k = storedKey(key);
      if (!request.has(k)) request.set(k, this.windowOf(k, rule, now));
    }
    const alreadyOver = [...request.values()].filter(over);
    if (alreadyOver.length) return refused(alreadyOver, now);
    const counted: Counted[] = [];
    for (const [key, w] of request) {
      if (w.rule.limit - w.known - w.sent - w.pending > LOCAL_HEADROOM) {
        w.pending++;
        this.flushLater();
      } else {
        counted.push({ key, window: w, n: w.pending + 1 });
        w.pending = 0;
      }
    }
    if (!counted.length) return ALLOWED;
    // This request's own counts decide (others answered meanwhile may have raised what a window knows).
    const own = await this.count(counted);
    const exceeded = counted.filter((c) => (own.get(c.key) ?? 0) > c.window.rule.limit).map((c) => c.window);
    return exceeded.length ? refused(exceeded, now) : ALLOWED;
  }

  /** Adds the requests counted here to the database (every FLUSH_MS while there are any). */
  async flush(): Promise<void> {
    clearTimeout(this.flushing);
    this.flushing = undefined;
    const now = this.clock.now();
    const counted: Counted[] = [];
    for (const [key, w] of this.windows) {
      if (w.end <= now) this.windows.delete(key);
      else if (w.pending) {
        counted.push({ key, window: w, n: w.pending });
        w.pending = 0;
      }
    }
    if (!counted.length) return;
    try {
      await this.count(counted);
    } catch {
      // the database is away for a moment: the requests go with the next flush (already counted back)
      this.flushLater();
    }
  }

  /** At shutdown: the last flush, and none after it (the database closes next). */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    clearTimeout(this.flushing);
  }

  private flushLater(): void {
    if (!this.closed) this.flushing ??= setTimeout(() => void this.flush(), FLUSH_MS).unref();
  }

  private windowOf(key: string, rule: RateRule, now: number): KeyWindow {
    const current = this.windows.get(key);
    // Compared by value: a caller may build its rule per request, and a replaced window would drop its pending requests.
    const same = current && current.rule.limit === rule.limit && current.rule.windowS === rule.windowS;
    if (same && current.start <= now && now < current.end) return current;
    if (this.windows.size >= MAX_WINDOWS) this.forget(now);
    const windowMs = rule.windowS * 1000;
    const start = Math.floor(now / windowMs) * windowMs;
    const w: KeyWindow = { rule, start, end: start + windowMs, known: 0, pending: 0, sent: 0 };
    this.windows.set(key, w);
    return w;
  }

  /**
   * Forgets ended windows, then those under their limit, then any. Never one with requests not yet in the
   * database (they would be lost). A forgotten window's count is in the database: exact rules ask it again.
   */
  private forget(now: number): void {
    const steps: ((w: KeyWindow) => boolean)[] = [(w) => w.end <= now, (w) => !over(w), () => true];
    for (const forgettable of steps) {
      for (const [key, w] of this.windows) if (!w.pending && !w.sent && forgettable(w)) this.windows.delete(key);
      if (this.windows.size < MAX_WINDOWS) return;
    }
  }

  /**
   * Adds the numbers in one statement; the database's count of each key's window after it. On failure the
   * numbers go back to the windows' pending requests, so that the next statement carries them.
   */
  private async count(counted: Counted[]): Promise<Map<string, number>> {
    for (const c of counted) c.window.sent += c.n;
    let rows: { key: string; hits: number }[];
    try {
      ({ rows } = await this.db.pool.query<{ key: string; hits: number }>(COUNT, [
        counted.map((c) => c.key),
        counted.map((c) => new Date(c.window.start)),
        counted.map((c) => new Date(c.window.end)),
        counted.map((c) => c.n),
      ]));
    } catch (e) {
      // counted back, a failed request's own included: better one count too many than a guess not counted
      for (const c of counted) c.window.pending += c.n;
      throw e;
    } finally {
      for (const c of counted) c.window.sent -= c.n;
    }
    const hits = new Map(rows.map((r) => [r.key, Number(r.hits)]));
    // Answers of statements sent at once can arrive in any order: the highest count is the latest.
    for (const c of counted) c.window.known = Math.max(c.window.known, hits.get(c.key) ?? 0);
    if (++this.sinceCleanup >= 1000) {
      this.sinceCleanup = 0;
      void this.db.pool.query("DELETE FROM rate_limit_counts WHERE expires_at < $1", [new Date(this.clock.now())]).catch(() => {});
    }
    return hits;
  }
}

/** Refused until the last of the exceeded windows ends. */
function refused(exceeded: KeyWindow[], now: number): RateVerdict {
  const end = Math.max(...exceeded.map((w) => w.end));
  return { allowed: false, retryAfterS: Math.max(1, Math.ceil((end - now) / 1000)) };
}

/** Keys carry client IDs and addresses of any length: hashed when long, so the row stays small. */
function storedKey(key: string): string {
  return key.length > 200 ? `h:${createHash("sha256").update(key).digest("base64url")}` : key;
}
