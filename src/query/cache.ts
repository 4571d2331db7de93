/**
 * A read-through cache of projection rows. It is emptied whenever an event is committed (in this process
 * right after commit, in other processes on the event NOTIFY), so it never serves a row older than the
 * newest committed event it has heard of. Bounded: past `max` entries it starts again empty.
 */
export class ProjectionCache {
  private readonly entries = new Map<string, Promise<unknown>>();

  constructor(private readonly max = 10_000) {}

  get<T>(key: string, load: () => Promise<T>): Promise<T> {
    const hit = this.entries.get(key);
    if (hit) return hit as Promise<T>;
    if (this.entries.size >= this.max) this.entries.clear();
    const value = load();
    this.entries.set(key, value);
    // A failed load is not remembered.
    value.catch(() => this.entries.delete(key));
    return value;
  }

  clear(): void {
    this.entries.clear();
  }
}
