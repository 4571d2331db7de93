import { createHash } from "node:crypto";
import { type Clock, systemClock } from "../domain/clock.js";
import type { RateRule } from "../domain/rate-rules.js";
import type { Database } from "../storage/database.js";
import type { RateVerdict } from "./rate-limits.js";

/** A key failures are counted under (a client address, an account) and the rule that limits it. */
export interface FailureKey {
  key: string;
  rule: RateRule;
}

/**
 * Adds one failure's share of its window to each key's time: a token bucket kept as the moment its allowance is
 * whole again (the "theoretical arrival time" of GCRA). One row per key, one statement for all of a request's
 * keys, atomic without a lock; on the server's clock (src/domain/clock.ts), which tests move.
 */
const FAIL = `
  INSERT INTO failure_limits AS f (key, tat)
  SELECT k, $3::timestamptz + make_interval(secs => s) FROM unnest($1::text[], $2::float8[]) AS x(k, s)
  ON CONFLICT (key) DO UPDATE SET tat = GREATEST(f.tat, $3::timestamptz) + (EXCLUDED.tat - $3::timestamptz)
  RETURNING key, EXTRACT(EPOCH FROM tat - $3::timestamptz)::float8 AS ahead`;

const READ = `SELECT key, EXTRACT(EPOCH FROM tat - $2::timestamptz)::float8 AS ahead FROM failure_limits WHERE key = ANY($1::text[]) AND tat > $2::timestamptz`;

/** What this process read or wrote of a key less than this long ago is trusted without asking the database. */
const FRESH_MS = 1000;
/** Keys remembered per process; past it, those read longest ago are forgotten (the database has them). */
const MAX_KEYS = 10_000;

interface Known {
  /** Seconds the key's time was ahead of the clock when read, and when (this process's clock). */
  aheadS: number;
  readAt: number;
}

/**
 * Limits on failed attempts at guessable secrets (security review, finding 9 and the limits): wrong
 * passwords, client secrets, codes, unknown tokens and login names count; successful requests cost nothing and
 * are never refused, so an office behind one address or a gateway introspecting all day is not limited, while
 * a spray of wrong passwords from one address is. A rule `<failures>/<seconds>` allows that many failures at
 * once and then one more every seconds/failures: a token bucket, with no window edge to double a burst across.
 *
 * Shared by all processes on the database: a key's time lives in `failure_limits`. Checking a key reads it at
 * most once a second per process (FRESH_MS); counting a failure writes it and returns the new time, so the
 * process that counts learns at once when a key goes over. Attempts already under way when a key goes over are
 * still answered (parallel guesses overshoot by their number), but each counts, and the key then stays refused
 * until every one of them has drained: a burst buys no more guesses than patience would.
 */
export class FailureLimiter {
  private readonly known = new Map<string, Known>();
  private sinceCleanup = 0;

  constructor(
    private readonly db: Database,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Whether another failure is allowed under every key; when not, Retry-After is the longest wait. */
  async check(keys: readonly FailureKey[]): Promise<RateVerdict> {
    if (!keys.length) return ALLOWED;
    const now = this.clock.now();
    const stale = keys.map((k) => storedKey(k.key)).filter((k) => !this.freshAt(k, now));
    if (stale.length) {
      const { rows } = await this.db.pool.query<{ key: string; ahead: number }>(READ, [stale, new Date(now)]);
      const read = new Map(rows.map((r) => [r.key, Number(r.ahead)]));
      for (const k of stale) this.remember(k, read.get(k) ?? 0, now);
    }
    return verdict(keys.map((k) => ({ rule: k.rule, aheadS: this.aheadOf(storedKey(k.key), now) })));
  }

  /** Counts one failure under each key. */
  async fail(keys: readonly FailureKey[]): Promise<void> {
    const unique = new Map<string, RateRule>();
    for (const k of keys) if (!unique.has(storedKey(k.key))) unique.set(storedKey(k.key), k.rule);
    if (!unique.size) return;
    const now = this.clock.now();
    const { rows } = await this.db.pool.query<{ key: string; ahead: number }>(FAIL, [[...unique.keys()], [...unique.values()].map(intervalS), new Date(now)]);
    for (const r of rows) this.remember(r.key, Number(r.ahead), now);
    if (++this.sinceCleanup >= 1000) {
      this.sinceCleanup = 0;
      void this.db.pool.query("DELETE FROM failure_limits WHERE tat < $1::timestamptz", [new Date(now)]).catch(() => {});
    }
  }

  private freshAt(key: string, now: number): boolean {
    const k = this.known.get(key);
    return !!k && now - k.readAt < FRESH_MS;
  }

  private aheadOf(key: string, now: number): number {
    const k = this.known.get(key);
    return k ? k.aheadS - (now - k.readAt) / 1000 : 0;
  }

  private remember(key: string, aheadS: number, now: number): void {
    this.known.delete(key);
    if (this.known.size >= MAX_KEYS) {
      // a Map iterates in insertion order and every write re-inserts: the first are the longest unread
      for (const old of this.known.keys()) {
        this.known.delete(old);
        if (this.known.size < MAX_KEYS * 0.9) break;
      }
    }
    this.known.set(key, { aheadS, readAt: now });
  }
}

/**
 * Where a sign-in step's failures count: the client address, and the account once the step names one. The
 * sessions API counts no address: its caller is a login UI that serves everyone from one address.
 */
export interface SignInLimits {
  limiter: FailureLimiter;
  address?: FailureKey | undefined;
  account?: RateRule | undefined;
}

/** A sign-in step refused before it was tried: too many failures under one of its keys. */
export interface TooManyFailures {
  tooManyFailures: true;
  retryAfterS: number;
}

export const isTooManyFailures = (r: unknown): r is TooManyFailures => typeof r === "object" && r !== null && "tooManyFailures" in r;

/**
 * Runs a sign-in step under its limits: refused (without trying it) while its address or account is over its
 * failures, counted when it fails (`attempt` answers undefined). Without limits it only runs the step.
 */
export async function limitedSignIn<T>(
  limits: SignInLimits | undefined,
  /** The account the step names: a user ID, or what stands for an unknown one (the login name typed). */
  account: string | undefined,
  attempt: () => Promise<T | undefined>,
): Promise<T | undefined | TooManyFailures> {
  if (!limits) return attempt();
  const keys: FailureKey[] = [];
  if (limits.address) keys.push(limits.address);
  if (account && limits.account) keys.push({ key: `signin:account:${account}`, rule: limits.account });
  const before = await limits.limiter.check(keys);
  if (!before.allowed) return { tooManyFailures: true, retryAfterS: before.retryAfterS };
  const outcome = await attempt();
  if (outcome === undefined) await limits.limiter.fail(keys);
  return outcome;
}

const ALLOWED: RateVerdict = { allowed: true, retryAfterS: 0 };

/** Each failure moves a key's time this far ahead: the window shared by its failures. */
const intervalS = (rule: RateRule) => rule.windowS / rule.limit;

/**
 * A key allows another failure while its time is at most a window less one failure ahead: `limit` failures at
 * once bring it a whole window ahead, and the next is refused until one failure's share has passed.
 */
function verdict(states: { rule: RateRule; aheadS: number }[]): RateVerdict {
  let wait = 0;
  for (const { rule, aheadS } of states) wait = Math.max(wait, aheadS - (rule.windowS - intervalS(rule)));
  // a float's last digit must not refuse a key that is exactly at its allowance
  return wait > 1e-6 ? { allowed: false, retryAfterS: Math.max(1, Math.ceil(wait)) } : ALLOWED;
}

/** Keys carry login names and addresses of any length: hashed when long, so the row stays small. */
function storedKey(key: string): string {
  return key.length > 200 ? `h:${createHash("sha256").update(key).digest("base64url")}` : key;
}
