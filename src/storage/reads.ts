import pg from "pg";
import { causesOf } from "../errors/causes.js";
import { databaseUnavailable } from "../errors/database-unavailable.js";
import { Replica, walPosition } from "./replica.js";

export interface ReplicaOptions {
  /** PostgreSQL URLs of streaming replicas of the primary. */
  urls: string[];
  /** Connections to each replica. */
  poolSize: number;
  /** A replica further behind the primary than this is skipped. */
  maxLagMs: number;
  /** How long a read waits for a replica to replay what it must see before the primary serves it. */
  waitMs: number;
  /** How often the primary's and the replicas' positions are asked for. */
  pollMs?: number;
}

/** Where reads went: per replica and to the primary, with why the primary served them. */
export interface ReadStatus {
  replicas: { name: string; up: boolean; usable: boolean; lagSeconds: number; lagBytes: number; served: number }[];
  primary: Record<PrimaryReason, number>;
}

/** Why the primary served a read that a replica could have: none usable, none caught up in time, or one failed it. */
type PrimaryReason = "no_replica" | "behind" | "retried";

/** How long the primary's positions are remembered: enough to tell any lag up to the bound and a little more. */
const SAMPLES_KEPT_MS = 1_000;

/**
 * Sends reads to streaming replicas without a caller ever reading older data than it wrote.
 *
 * Read-your-writes by a fence: the newest WAL position this process knows to be committed. A replica serves a
 * read only once it has replayed the fence. The fence rises with every commit of this process (`committedAt`,
 * the position its COMMIT reached, before the caller is answered and before caches drop entries) and with every
 * commit another process is heard of (`changedElsewhere`, on its NOTIFY or a worker's word: reads wait while the
 * primary is asked for its position, which is past that commit). So a cache entry loaded after an invalidation
 * is read from a node that has the change. A read whose fence no replica has reached waits up to `waitMs` for one
 * (polled back to back) and is then served by the primary; a replica that did not make it is skipped until a
 * poll finds it past the fence. A replica down, promoted, of another cluster or database or lagging past `maxLagMs` is
 * skipped; a read that fails on a replica's connection or is cancelled by recovery is run on the primary. No
 * per-request state: one fence per process (an AsyncLocalStorage would cost every promise, `docs/performance.md`).
 */
export class ReadRouter {
  private readonly replicas: Replica[];
  private fence = 0n;
  /** Commits of other processes noticed, and how many of them the fence covers: reads wait for the rest. */
  private noticed = 0;
  private learned = 0;
  private learning = false;
  private fenceWaiters: { need: number; resolve: () => void }[] = [];
  /** A commit elsewhere whose position could not be learnt: reads go to the primary until a poll learns one. */
  private fenceUnknown = false;
  private readonly samples: { at: number; position: bigint }[] = [];
  private system: string | undefined;
  private readonly timer: NodeJS.Timeout;
  private next = 0;
  private readonly primaryServed: Record<PrimaryReason, number> = { no_replica: 0, behind: 0, retried: 0 };
  readonly pool: pg.Pool;

  constructor(
    private readonly primary: pg.Pool,
    private readonly options: ReplicaOptions,
  ) {
    this.replicas = options.urls.map((url, i) => new Replica(`replica-${i + 1}`, url, options.poolSize, () => this.system));
    this.pool = new RoutingPool(this);
    this.timer = setInterval(() => void this.poll(), options.pollMs ?? 100);
    this.timer.unref();
  }

  /** Asks every node for its position once; the first reads wait for it. */
  async start(): Promise<void> {
    await this.poll();
  }

  /** A commit of this process reached `position`: reads from now on need it. */
  committedAt(position: string): void {
    const p = walPosition(position);
    if (p > this.fence) this.fence = p;
  }

  /** The fence: what a caller carries to another machine (`readAfter`). */
  position(): bigint {
    return this.fence;
  }

  /**
   * A caller carried `position` from another machine (the read-after token): reads from now on need it. A position
   * the primary was already seen past raises the fence at once; a newer one (a commit since the last poll, or a
   * made-up one) counts as a commit elsewhere: the primary is asked, and its answer becomes the fence, not the
   * token, so a position far ahead costs reads one question to the primary and cannot hold them off the replicas.
   */
  readAfter(position: bigint): void {
    if (position <= this.fence) return;
    if (position <= (this.samples.at(-1)?.position ?? -1n)) this.fence = position;
    else this.changedElsewhere();
  }

  /**
   * Another process committed: reads wait until the primary's position, asked after this call, is the fence.
   * Reads wait only for the question that covers the commits noticed before them, so a stream of notices does not
   * hold them up: one question at a time, the next one covering every notice heard meanwhile.
   */
  changedElsewhere(): void {
    this.noticed++;
    if (!this.learning) void this.learnFence();
  }

  private async learnFence(): Promise<void> {
    this.learning = true;
    while (this.learned < this.noticed) {
      const asked = this.noticed;
      try {
        this.committedAt(await this.primaryPosition());
      } catch {
        this.fenceUnknown = true;
      }
      this.learned = asked;
      const covered = this.fenceWaiters.filter((w) => w.need <= asked);
      this.fenceWaiters = this.fenceWaiters.filter((w) => w.need > asked);
      for (const w of covered) w.resolve();
    }
    this.learning = false;
  }

  /** Resolves once the fence covers every commit noticed so far; undefined when it already does. */
  private fenceLearnt(): Promise<void> | undefined {
    if (this.learned >= this.noticed) return undefined;
    const need = this.noticed;
    return new Promise((resolve) => this.fenceWaiters.push({ need, resolve }));
  }

  private async primaryPosition(): Promise<string> {
    const { rows } = await this.primary.query<{ position: string }>("SELECT pg_current_wal_insert_lsn()::text AS position");
    return rows[0]!.position;
  }

  private async poll(): Promise<void> {
    // the primary first: a replica is compared with it
    await this.pollPrimary();
    await Promise.all(this.replicas.map((r) => r.poll()));
    const now = performance.now();
    const newest = this.samples.at(-1)?.position ?? 0n;
    for (const r of this.replicas) {
      if (r.replayed >= this.fence) r.behind = false;
      // Lag in time: since the oldest remembered primary position the replica has not replayed.
      const ahead = this.samples.find((s) => s.position > r.replayed);
      r.lagMs = ahead ? now - ahead.at : 0;
      r.lagBytes = newest > r.replayed ? newest - r.replayed : 0n;
    }
  }

  private async pollPrimary(): Promise<void> {
    try {
      const unknown = this.fenceUnknown;
      if (this.system === undefined) {
        const { rows } = await this.primary.query<{ system: string }>(
          "SELECT system_identifier::text || '/' || current_database() AS system FROM pg_control_system()",
        );
        this.system = rows[0]!.system;
      }
      const position = await this.primaryPosition();
      if (unknown) {
        // Asked after the commit whose position could not be learnt: this one covers it.
        this.committedAt(position);
        this.fenceUnknown = false;
      }
      const now = performance.now();
      this.samples.push({ at: now, position: walPosition(position) });
      const keep = now - this.options.maxLagMs - SAMPLES_KEPT_MS;
      while (this.samples.length > 1 && this.samples[0]!.at < keep) this.samples.shift();
    } catch {
      // The primary's own reads and writes will say that it is gone.
    }
  }

  /** Runs a read on a replica that has everything this process knows committed, else on the primary. */
  async read<T>(run: (pool: pg.Pool) => Promise<T>): Promise<T> {
    const replica = await this.choose();
    if (typeof replica === "string") {
      this.primaryServed[replica]++;
      return run(this.primary);
    }
    try {
      const result = await run(replica.pool);
      replica.served++;
      return result;
    } catch (err) {
      if (!replicaCouldNotAnswer(err)) throw err;
      if (databaseUnavailable(err)) replica.failed();
      this.primaryServed.retried++;
      return run(this.primary);
    }
  }

  private async choose(): Promise<Replica | PrimaryReason> {
    const learning = this.fenceLearnt();
    if (learning) await learning;
    if (this.fenceUnknown) return "behind";
    const fence = this.fence;
    const usable = this.replicas.filter((r) => r.usable(this.options.maxLagMs));
    if (!usable.length) return "no_replica";
    const ready = usable.filter((r) => r.replayed >= fence);
    if (ready.length) return ready[this.next++ % ready.length]!;
    const waiting = usable.filter((r) => !r.behind);
    const caughtUp = waiting.length ? await this.waitFor(waiting, fence) : undefined;
    if (caughtUp) return caughtUp;
    for (const r of waiting) r.behind = true;
    return "behind";
  }

  /** Polls the replicas back to back until one has replayed `fence`, for at most the wait. */
  private async waitFor(replicas: Replica[], fence: bigint): Promise<Replica | undefined> {
    const deadline = performance.now() + this.options.waitMs;
    for (let left = this.options.waitMs; left > 0; left = deadline - performance.now()) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, left);
      });
      await Promise.race([Promise.all(replicas.map((r) => r.poll())), timeout]);
      clearTimeout(timer);
      const ready = replicas.find((r) => r.usable(this.options.maxLagMs) && r.replayed >= fence);
      if (ready) return ready;
    }
    return undefined;
  }

  status(): ReadStatus {
    return {
      replicas: this.replicas.map((r) => ({
        name: r.name,
        up: !r.down && !r.foreign,
        usable: r.usable(this.options.maxLagMs),
        lagSeconds: r.lagMs / 1000,
        lagBytes: Number(r.lagBytes),
        served: r.served,
      })),
      primary: { ...this.primaryServed },
    };
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.replicas.map((r) => r.close()));
  }
}

/**
 * Errors after which a read is run again on the primary (reads are idempotent): the replica's connection failed,
 * or its statement was not answered in time (both `databaseUnavailable`), or recovery cancelled the statement (40001: it conflicted with replayed changes; 57P04: its database
 * was dropped).
 */
function replicaCouldNotAnswer(err: unknown): boolean {
  if (databaseUnavailable(err)) return true;
  for (const e of causesOf(err)) {
    const { code } = (e ?? {}) as { code?: unknown };
    if (code === "40001" || code === "57P04") return true;
  }
  return false;
}

/**
 * What Prisma and the searches see as their pool of readers: each statement goes where the router sends it.
 * A connection Prisma asks for (a plan of several statements) is taken from the node chosen for it.
 */
class RoutingPool extends pg.Pool {
  constructor(private readonly router: ReadRouter) {
    super({ max: 1 });
  }

  // Callers use query(config) or query(text, values) and the promise; the override keeps pg's signature for the type checker.
  override query(...args: unknown[]): never {
    return this.router.read((pool) => (pool.query as (...a: unknown[]) => Promise<unknown>).apply(pool, args)) as never;
  }

  override connect(): never {
    return this.router.read((pool) => pool.connect()) as never;
  }
}
