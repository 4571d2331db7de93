import pg from "pg";
import { type Connection, newClient } from "./primary-client.js";

/** The first wait before connecting again, doubled after each failure up to the longest. */
const RETRY_FIRST_MS = 100;
const RETRY_LONGEST_MS = 5_000;

/** What a listener hears when notifications may have been missed: no payload, "anything may have changed". */
export const NOTIFICATIONS_MISSED = "";

/**
 * A process's one LISTEN connection, which keeps itself up. PostgreSQL delivers a notification to the sessions
 * listening when it is sent, and to no one later: while the connection is down (the database restarted or failed
 * over, a proxy or a firewall cut it) notifications are lost. So every listener hears `NOTIFICATIONS_MISSED` when
 * the connection breaks and again once it listens again: the caches drop what they hold, the subscriptions look
 * for what they missed. It connects again by itself, after 100 ms and then at longest every 5 s.
 */
export class NotificationListener {
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private readonly listeners = new Map<string, Set<(payload: string) => void>>();
  private retryMs = RETRY_FIRST_MS;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly connection: Connection) {}

  /** Whether notifications are heard now (the connection is up and listening). */
  get listening(): boolean {
    return this.client !== undefined;
  }

  /** Calls `fn` with each notification on `channel`; the first call connects (and fails when it cannot). */
  async listen(channel: string, fn: (payload: string) => void): Promise<() => Promise<void>> {
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      if (this.client) {
        // A connection that breaks meanwhile listens to every channel when it is made again.
        await this.client.query(`LISTEN ${pg.escapeIdentifier(channel)}`).catch(() => {});
      }
    }
    set.add(fn);
    if (!this.client && !this.retry) {
      if (!this.connecting) {
        this.connecting = this.connect().finally(() => {
          this.connecting = undefined;
        });
      }
      await this.connecting;
    }
    return async () => void this.listeners.get(channel)?.delete(fn);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    const client = newClient(this.connection);
    // An error is followed by `end`, where the loss is handled.
    client.on("error", () => {});
    client.on("notification", (n) => {
      for (const f of this.listeners.get(n.channel) ?? []) f(n.payload ?? "");
    });
    try {
      await client.connect();
      for (const channel of this.listeners.keys()) await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch (err) {
      await client.end().catch(() => {});
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    client.on("end", () => this.lost(client));
    this.client = client;
  }

  private lost(client: pg.Client): void {
    if (this.client !== client || this.closed) return;
    this.client = undefined;
    this.missed();
    this.reconnect();
  }

  private reconnect(): void {
    this.retry = setTimeout(() => {
      this.connect().then(
        () => {
          this.retry = undefined;
          this.retryMs = RETRY_FIRST_MS;
          // Listening again: what was sent meanwhile was heard by no one here.
          if (!this.closed) this.missed();
        },
        () => {
          this.retryMs = Math.min(RETRY_LONGEST_MS, this.retryMs * 2);
          if (!this.closed) this.reconnect();
        },
      );
    }, this.retryMs);
    this.retry.unref();
  }

  private missed(): void {
    for (const set of this.listeners.values()) for (const f of set) f(NOTIFICATIONS_MISSED);
  }
}
