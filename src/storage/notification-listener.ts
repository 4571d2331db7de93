import pg from "pg";
import { type Connection, newClient } from "./primary-client.js";

/** The first wait before connecting again, doubled after each failure up to the longest. */
const RETRY_FIRST_MS = 100;
const RETRY_LONGEST_MS = 5_000;

/**
 * How often an idle LISTEN connection asks the server whether it is still there. A connection whose packets are
 * dropped (a host gone without a reset, a moved address) would otherwise wait for notifications for ever while
 * they go unheard: the caches would keep what other processes changed.
 */
const HEARTBEAT_MS = 5_000;

/** The LISTEN connection's `application_name`, by which an operator (or a test) tells it from the pool's. */
export const LISTENER_APPLICATION_NAME = "svc notifications";

/** What a listener hears when notifications may have been missed: no payload, "anything may have changed". */
export const NOTIFICATIONS_MISSED = "";

/**
 * A process's one LISTEN connection, which keeps itself up. PostgreSQL delivers a notification to the sessions
 * listening when it is sent, and to no one later: while the connection is down (the database restarted or failed
 * over, a proxy or a firewall cut it) notifications are lost. So every listener hears `NOTIFICATIONS_MISSED` when
 * the connection breaks and again once it listens again: the caches drop what they hold, the subscriptions look
 * for what they missed. It connects again by itself, after 100 ms and then at longest every 5 s. A connection
 * that stops answering counts as broken (`HEARTBEAT_MS`).
 */
export class NotificationListener {
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private readonly listeners = new Map<string, Set<(payload: string) => void>>();
  private retryMs = RETRY_FIRST_MS;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;

  private heartbeat: NodeJS.Timeout | undefined;

  /** `answerMs`: how long the heartbeat waits for the server's answer before the connection is given up. */
  constructor(
    private readonly connection: Connection,
    private readonly answerMs = 5_000,
  ) {}

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
    clearTimeout(this.heartbeat);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    // Named in pg_stat_activity (its last statement is the heartbeat's, not LISTEN)
    const client = newClient(this.connection, LISTENER_APPLICATION_NAME);
    // An error is followed by `end`, where the loss is handled.
    client.on("error", () => {});
    client.on("notification", (n) => {
      for (const f of this.listeners.get(n.channel) ?? []) f(n.payload ?? "");
    });
    try {
      await client.connect();
      // bounded as the heartbeat is, which starts once the connection listens
      for (const channel of this.listeners.keys())
        await client.query({ text: `LISTEN ${pg.escapeIdentifier(channel)}`, query_timeout: this.answerMs } as pg.QueryConfig);
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
    this.beat(client);
  }

  /** Asks the server every HEARTBEAT_MS; no answer in `answerMs`: the connection is lost. */
  private beat(client: pg.Client): void {
    this.heartbeat = setTimeout(() => {
      client.query({ text: "SELECT 1", query_timeout: this.answerMs } as pg.QueryConfig).then(
        () => this.client === client && this.beat(client),
        () => {
          this.lost(client);
          // Its socket is not closed by the server (no packets arrive): close it here.
          (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
        },
      );
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private lost(client: pg.Client): void {
    if (this.client !== client || this.closed) return;
    clearTimeout(this.heartbeat);
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
