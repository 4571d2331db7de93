import pg from "pg";

/** A WAL position ("16/B374D848") as a number that orders as the log does; -1 for none (not a standby). */
export function walPosition(text: string | null | undefined): bigint {
  if (!text) return -1n;
  const [high, low] = text.split("/");
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

/** A WAL position as a caller writes it ("16/B374D848", either case), else undefined: anything else is not one. */
export function walPositionOf(text: string): bigint | undefined {
  return /^[\dA-Fa-f]{1,8}\/[\dA-Fa-f]{1,8}$/.test(text) ? walPosition(text) : undefined;
}

/** A WAL position as PostgreSQL writes it. */
export function walText(position: bigint): string {
  return `${(position >> 32n).toString(16).toUpperCase()}/${(position & 0xffffffffn).toString(16).toUpperCase()}`;
}

/** How long a statement on a replica may take before it is given up (and run on the primary). */
const REPLICA_QUERY_TIMEOUT_MS = 10_000;

const POSITION =
  "SELECT pg_last_wal_replay_lsn()::text AS replayed, pg_is_in_recovery() AS recovering, system_identifier::text || '/' || current_database() AS system FROM pg_control_system()";

/**
 * One streaming replica as the server sees it: its pool and what its last poll said. A poll is one statement
 * and at most one runs at a time, however many reads wait for it.
 */
export class Replica {
  readonly pool: pg.Pool;
  /** The WAL position it had replayed at its last poll. */
  replayed = -1n;
  /** Not reachable (its last poll or a read failed on the connection), or never reached yet. */
  down = true;
  /**
   * Not a standby of our primary: it was promoted (no longer in recovery) or is another cluster or database. Its
   * reads would not follow our writes: skipped until a poll says otherwise.
   */
  foreign = false;
  /** It stayed below a read's fence for the whole wait: skipped without waiting until a poll finds it past the fence. */
  behind = false;
  /** Milliseconds since the primary first had a position the replica has not replayed yet (0: caught up). */
  lagMs = 0;
  lagBytes = 0n;
  served = 0;
  private polling: Promise<void> | undefined;

  constructor(
    readonly name: string,
    url: string,
    poolSize: number,
    private readonly primarySystem: () => string | undefined,
  ) {
    this.pool = new pg.Pool({
      connectionString: url,
      max: poolSize,
      // A replica that stops answering costs one slow read (then the primary serves it), never a hang.
      connectionTimeoutMillis: 1_000,
      query_timeout: REPLICA_QUERY_TIMEOUT_MS,
      keepAlive: true,
    });
    // A broken idle connection is replaced by the pool; the next poll says whether the replica is there.
    this.pool.on("error", () => {});
  }

  usable(maxLagMs: number): boolean {
    return !this.down && !this.foreign && this.lagMs <= maxLagMs;
  }

  /** Asks the replica how far it has replayed; a poll in flight is shared. */
  poll(): Promise<void> {
    this.polling ??= this.pollOnce().finally(() => {
      this.polling = undefined;
    });
    return this.polling;
  }

  private async pollOnce(): Promise<void> {
    try {
      const { rows } = await this.pool.query<{ replayed: string | null; recovering: boolean; system: string }>(POSITION);
      const [row] = rows;
      const primary = this.primarySystem();
      // not known to be the primary's yet (the primary not asked yet, or away): not used until it is
      this.foreign = !row!.recovering || primary === undefined || row!.system !== primary;
      this.replayed = walPosition(row!.replayed);
      this.down = false;
    } catch {
      this.down = true;
    }
  }

  /** A read failed on this replica's connection: skipped until a poll reaches it again. */
  failed(): void {
    this.down = true;
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}
