import { collectDefaultMetrics, Counter, Gauge, Histogram, type Metric, Registry } from "prom-client";

/** What the pool of `pg` reports (`pg.Pool`); read at each scrape. */
export interface PoolStats {
  readonly totalCount: number;
  readonly idleCount: number;
  readonly waitingCount: number;
  readonly options?: { max?: number };
}

/** Reads served from a cache and reads that loaded (`ProjectionCache.stats`); only ever growing. */
export interface CacheStats {
  readonly hits: number;
  readonly misses: number;
}

/** Where reads that may go to a replica went, and the replicas' state (`src/storage/reads.ts`); read at each scrape. */
export type ReadStats = () =>
  | {
      replicas: { name: string; up: boolean; usable: boolean; lagSeconds: number; lagBytes: number; served: number }[];
      primary: Record<string, number>;
    }
  | undefined;

/** Per durable subscription: committed events it has not handled yet. */
export type SubscriberLag = () => Promise<Iterable<{ name: string; behind: number }>>;

/** Records one request of a route: its duration in seconds and its outcome (gRPC code name or HTTP status). */
export type Recorder = (seconds: number, outcome: string | number) => void;

// From 1 ms: most calls answer from the cache in about a millisecond, and a bucket above them says nothing.
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const APPEND_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** One label set's requests: counts per outcome, and the duration histogram's buckets (not cumulative), sum and count. */
interface Series {
  labels: Record<string, string>;
  outcomes: Map<string | number, number>;
  buckets: Float64Array;
  sum: number;
  count: number;
}

/**
 * A request counter (by the labels and an outcome) and a duration histogram (by the labels), recorded in plain
 * numbers: a request costs a bucket search and a few additions, no label hashing and no allocation (prom-client's
 * own metrics take about a microsecond and some garbage per observation). They are turned into prom-client's
 * metric values at a scrape; the registry asks a metric only for `name`, `help`, `type`, `aggregator` and `get()`.
 */
class RequestMetrics {
  private readonly series = new Map<string, Series>();

  constructor(
    registry: Registry,
    private readonly o: { total: string; totalHelp: string; duration: string; durationHelp: string; outcome: string; buckets: number[] },
  ) {
    const all = () => [...this.series.values()];
    const counter = {
      name: o.total,
      help: o.totalHelp,
      type: "counter",
      aggregator: "sum",
      get: async () => ({
        name: o.total,
        help: o.totalHelp,
        type: "counter",
        aggregator: "sum",
        values: all().flatMap((s) => [...s.outcomes].map(([outcome, value]) => ({ labels: { ...s.labels, [o.outcome]: String(outcome) }, value }))),
      }),
    };
    const histogram = {
      name: o.duration,
      help: o.durationHelp,
      type: "histogram",
      aggregator: "sum",
      get: async () => ({
        name: o.duration,
        help: o.durationHelp,
        type: "histogram",
        aggregator: "sum",
        values: all().flatMap((s) => {
          let cumulative = 0;
          const buckets = [...o.buckets, "+Inf" as const].map((le, i) => {
            cumulative += s.buckets[i]!;
            return { metricName: `${o.duration}_bucket`, labels: { ...s.labels, le }, value: cumulative };
          });
          return [
            ...buckets,
            { metricName: `${o.duration}_sum`, labels: s.labels, value: s.sum },
            { metricName: `${o.duration}_count`, labels: s.labels, value: s.count },
          ];
        }),
      }),
    };
    registry.registerMetric(counter as unknown as Metric);
    registry.registerMetric(histogram as unknown as Metric);
  }

  /** The recorder of one label set (the same series for the same labels, however often asked). */
  recorder(labels: Record<string, string>): Recorder {
    const key = Object.values(labels).join("\u0000");
    let s = this.series.get(key);
    if (!s) {
      s = { labels, outcomes: new Map(), buckets: new Float64Array(this.o.buckets.length + 1), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    const series = s;
    const bounds = this.o.buckets;
    return (seconds, outcome) => {
      let i = 0;
      while (i < bounds.length && seconds > bounds[i]!) i++;
      series.buckets[i]!++;
      series.sum += seconds;
      series.count++;
      series.outcomes.set(outcome, (series.outcomes.get(outcome) ?? 0) + 1);
    };
  }
}

/**
 * Node's and the process's own metrics (CPU, memory, event loop lag, GC, handles), once per process: they
 * describe the process, and each `collectDefaultMetrics` call would watch the event loop again.
 */
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/**
 * The server's metrics in Prometheus form (prom-client), in a registry of their own so that several servers in
 * one process (the tests) each count their own. Requests are counted where they end (`server/observe.ts`):
 * every RPC once, whatever its protocol, REST included, in `svc_rpc_*`; every other route in `svc_http_*`.
 * The rest is read when scraped: the database pool, the projection cache, the subscribers' lag.
 */
/** Counts of the notification worker, plain numbers it increments; read at a scrape. */
export interface MessageStats {
  sent: number;
  retried: number;
  failed: number;
}

export class Metrics {
  private readonly registry = new Registry();
  private readonly exposed: Registry;
  private readonly rpcs: RequestMetrics;
  private readonly routes: RequestMetrics;
  private readonly appendDuration: Histogram;
  private readonly eventsAppended: Counter;
  private lag: SubscriberLag | undefined;
  private messages: MessageStats | undefined;

  constructor(sources: { pool?: PoolStats; cache?: CacheStats; reads?: ReadStats; failovers?: () => number; labels?: Record<string, string> } = {}) {
    const registers = [this.registry];
    this.rpcs = new RequestMetrics(this.registry, {
      total: "svc_rpc_requests_total",
      totalHelp: "RPCs answered, by service, method, protocol (grpc, grpc-web, connect, rest) and gRPC status code",
      duration: "svc_rpc_request_duration_seconds",
      durationHelp: "Time from an RPC's arrival to the end of its response, by service, method and protocol",
      outcome: "code",
      buckets: REQUEST_BUCKETS,
    });
    this.routes = new RequestMetrics(this.registry, {
      total: "svc_http_requests_total",
      totalHelp: "Requests to routes that are not RPCs (the OAuth 2.0 / OIDC endpoints, the login UI, health, metrics), by method, route and HTTP status",
      duration: "svc_http_request_duration_seconds",
      durationHelp: "Time from the arrival of a request to a route that is not an RPC to the end of its response, by method and route",
      outcome: "status",
      buckets: REQUEST_BUCKETS,
    });
    this.appendDuration = new Histogram({
      name: "svc_eventstore_append_duration_seconds",
      help: "Duration of the committed transactions that appended events",
      buckets: APPEND_BUCKETS,
      registers,
    });
    this.eventsAppended = new Counter({ name: "svc_eventstore_events_appended_total", help: "Events appended to the event log", registers });
    const metrics = this;
    new Gauge({
      name: "svc_subscriber_lag_events",
      help: "Committed events a durable subscriber has not handled yet, by subscription",
      labelNames: ["subscription"],
      registers,
      async collect() {
        this.reset();
        if (!metrics.lag) return;
        try {
          for (const s of await metrics.lag()) this.set({ subscription: s.name }, s.behind);
        } catch {
          // the database is unreachable: no figure rather than a failed scrape (readyz reports the database)
        }
      },
    });
    const pool = sources.pool;
    if (pool) {
      new Gauge({
        name: "svc_db_pool_connections",
        help: "Connections of the database pool, by state: idle, or used by a query or transaction",
        labelNames: ["state"],
        registers,
        collect() {
          this.set({ state: "idle" }, pool.idleCount);
          this.set({ state: "used" }, pool.totalCount - pool.idleCount);
        },
      });
      new Gauge({
        name: "svc_db_pool_waiting_requests",
        help: "Queries and transactions waiting for a connection of the database pool",
        registers,
        collect() {
          this.set(pool.waitingCount);
        },
      });
      new Gauge({
        name: "svc_db_pool_max_connections",
        help: "The most connections the database pool opens",
        registers,
        collect() {
          this.set(pool.options?.max ?? 10);
        },
      });
    }
    if (sources.reads?.()) replicaMetrics(sources.reads, registers);
    const failovers = sources.failovers;
    if (failovers) {
      let seen = 0;
      new Counter({
        name: "svc_db_failovers_total",
        help: "Times another server of DATABASE_URL's list took the writes than the one connected to before (a failover seen)",
        registers,
        collect() {
          const now = failovers();
          this.inc(Math.max(0, now - seen));
          seen = now;
        },
      });
    }
    const cache = sources.cache;
    if (cache) {
      // The cache counts in plain numbers on its hot path; the counter catches up at each scrape.
      const seen = { hits: 0, misses: 0 };
      new Counter({
        name: "svc_projection_cache_requests_total",
        help: "Reads through the projection cache, by result: hit (served from memory) or miss (loaded from the database)",
        labelNames: ["result"],
        registers,
        collect() {
          const { hits, misses } = cache;
          this.inc({ result: "hit" }, Math.max(0, hits - seen.hits));
          this.inc({ result: "miss" }, Math.max(0, misses - seen.misses));
          seen.hits = hits;
          seen.misses = misses;
        },
      });
    }
    const seenMessages: MessageStats = { sent: 0, retried: 0, failed: 0 };
    new Counter({
      name: "svc_notifications_total",
      help: "Messages (mail, SMS) of the notification worker, by result: sent, retried (an attempt failed, another follows), failed (given up)",
      labelNames: ["result"],
      registers,
      collect() {
        const m = metrics.messages;
        if (!m) return;
        for (const k of ["sent", "retried", "failed"] as const) {
          this.inc({ result: k }, Math.max(0, m[k] - seenMessages[k]));
          seenMessages[k] = m[k];
        }
      },
    });
    this.exposed = Registry.merge([processMetrics(), this.registry]);
    // a worker's series carry its slot (worker-metrics.ts)
    this.exposed.setDefaultLabels(sources.labels ?? {});
  }

  /** The recorder of one RPC over one protocol; the outcome is the gRPC status code's name (OK, NOT_FOUND, ...). */
  rpc(service: string, method: string, protocol: string): Recorder {
    return this.rpcs.recorder({ service, method, protocol });
  }

  /** The recorder of one route and HTTP method that is not an RPC; the outcome is the HTTP status. */
  http(method: string, route: string): Recorder {
    return this.routes.recorder({ method, route });
  }

  /** A committed transaction appended `events` events in `ms` milliseconds (the event store's hook). */
  appended(ms: number, events: number): void {
    this.appendDuration.observe(ms / 1000);
    this.eventsAppended.inc(events);
  }

  /** Where the subscribers' lag is read at each scrape. */
  /** The notification worker's counts, read at each scrape. */
  watchMessages(stats: MessageStats): void {
    this.messages = stats;
  }

  watchSubscribers(lag: SubscriberLag): void {
    this.lag = lag;
  }

  readonly contentType = Registry.PROMETHEUS_CONTENT_TYPE;

  /** The text exposition format. */
  text(): Promise<string> {
    return this.exposed.metrics();
  }
}

/**
 * Read replicas: `svc_db_reads_total` counts the reads that may go to a replica by the node that served them (the
 * primary's with why: no replica usable, none caught up in time, or one failed the read); lag and reachability per
 * replica as the server sees them.
 */
function replicaMetrics(reads: ReadStats, registers: Registry[]): void {
  const seen = new Map<string, number>();
  new Counter({
    name: "svc_db_reads_total",
    help: "Reads that may be served by a replica, by the node that served them (primary or replica-N) and, for the primary, why (no_replica, behind, retried)",
    labelNames: ["node", "reason"],
    registers,
    collect() {
      const now = reads();
      if (!now) return;
      const counts: [Record<string, string>, number][] = [
        ...now.replicas.map((r): [Record<string, string>, number] => [{ node: r.name, reason: "" }, r.served]),
        ...Object.entries(now.primary).map(([reason, n]): [Record<string, string>, number] => [{ node: "primary", reason }, n]),
      ];
      for (const [labels, n] of counts) {
        const key = `${labels.node}/${labels.reason}`;
        this.inc(labels, Math.max(0, n - (seen.get(key) ?? 0)));
        seen.set(key, n);
      }
    },
  });
  const perReplica = (name: string, help: string, value: (r: NonNullable<ReturnType<ReadStats>>["replicas"][number]) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ["replica"],
      registers,
      collect() {
        for (const r of reads()?.replicas ?? []) this.set({ replica: r.name }, value(r));
      },
    });
  perReplica("svc_db_replica_up", "1 when the replica answers and is a standby of the primary, else 0", (r) => (r.up ? 1 : 0));
  perReplica("svc_db_replica_lag_seconds", "How long the replica has been behind the primary's WAL position (0: caught up)", (r) => r.lagSeconds);
  perReplica("svc_db_replica_lag_bytes", "WAL bytes the primary has written that the replica has not replayed", (r) => r.lagBytes);
}
