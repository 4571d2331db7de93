/**
 * What a cached value was read from: every aggregate of a type (`"user"`: a lookup by something other than
 * the aggregate's ID, a list, a count), or one aggregate (`{ type: "user", id }`: a row that only the events
 * of that aggregate change).
 */
export type Source = string | { type: string; id: string };

/** An appended event as the cache sees it: which aggregate changed. */
export interface Changed {
  aggregateType: string;
  aggregateId: string;
}

/**
 * A read-through cache of projection rows. Each entry names its sources; a committed event drops the entries
 * read from its aggregate or its aggregate's type (in this process right after commit, in other processes on
 * the event NOTIFY), so it never serves a row older than the newest committed event it has heard of, and a
 * write never empties unrelated entries. An entry that names no sources is read from everything: any event
 * drops it. Bounded: past `max` entries it starts again empty.
 */
export class ProjectionCache {
  private readonly entries = new Map<string, Promise<unknown>>();
  /** Source tag -> keys read from it. A tag is `*`, a type (`user`) or an aggregate (`user\u0000<id>`). */
  private readonly bySource = new Map<string, Set<string>>();
  /** Counters for metrics: reads served from the cache, and reads that loaded. */
  readonly stats = { hits: 0, misses: 0 };

  constructor(private readonly max = 10_000) {}

  get<T>(key: string, load: () => Promise<T>, sources: readonly Source[] = ["*"]): Promise<T> {
    const hit = this.entries.get(key);
    if (hit) {
      this.stats.hits++;
      return hit as Promise<T>;
    }
    this.stats.misses++;
    if (this.entries.size >= this.max) this.clear();
    const value = load();
    this.entries.set(key, value);
    for (const s of sources) this.tag(typeof s === "string" ? s : aggregateTag(s.type, s.id)).add(key);
    // A failed load is not remembered.
    value.catch(() => this.drop(key, value));
    return value;
  }

  /** Drops what the changed aggregates were read into. */
  invalidate(changed: readonly Changed[]): void {
    this.dropTag("*");
    for (const c of changed) {
      this.dropTag(c.aggregateType);
      this.dropTag(aggregateTag(c.aggregateType, c.aggregateId));
    }
  }

  clear(): void {
    this.entries.clear();
    this.bySource.clear();
  }

  private tag(tag: string): Set<string> {
    const keys = this.bySource.get(tag) ?? new Set<string>();
    this.bySource.set(tag, keys);
    return keys;
  }

  private dropTag(tag: string): void {
    const keys = this.bySource.get(tag);
    if (!keys) return;
    this.bySource.delete(tag);
    // The key's other tags may still name it; a later drop of a key that is gone is harmless.
    for (const k of keys) this.entries.delete(k);
  }

  private drop(key: string, value: Promise<unknown>): void {
    if (this.entries.get(key) === value) this.entries.delete(key);
  }
}

const aggregateTag = (type: string, id: string) => `${type}\u0000${id}`;
