import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "../../src/storage/database.js";
import { walPosition, walPositionOf, walText } from "../../src/storage/replica.js";
import { until } from "../support/machine.js";
import { type PrivatePostgres, startPrivatePostgres, startReplica, ownPostgresRunsHere } from "../support/private-postgres.js";

/**
 * The read router of `src/storage/reads.ts` on a real primary and streaming replica (issue 32, point 1): which
 * node serves a read, and why. Replay paused on the replica makes a read that went there visibly stale.
 */
let primary: PrivatePostgres;
let replica: PrivatePostgres;
let db: Database;

const count = async (pool: pg.Pool) => (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM marks")).rows[0]!.n;
const status = () => db.readStatus()!;
const served = () => status().replicas[0]!.served;
/** Settles until a read goes to the replica: the router knows it is caught up with everything this process knows. */
const replicaServing = () =>
  until("the replica serving", async () => {
    const before = served();
    await count(db.reads.pool);
    return served() > before || undefined;
  });

beforeAll(async () => {
  if (!ownPostgresRunsHere) return;
  primary = await startPrivatePostgres();
  await primary.query("CREATE TABLE marks (n int)");
  replica = await startReplica(primary);
  db = await openDatabase({
    databaseUrl: primary.url,
    dataDir: "/nonexistent",
    poolSize: 4,
    // a wait long enough for replay on a loaded machine: a read served by the primary here means the wait did not work
    replicas: { urls: [replica.url], poolSize: 4, maxLagMs: 3_000, waitMs: 1_000, pollMs: 50 },
  });
}, 60_000);
afterAll(async () => {
  await db?.close();
  replica?.remove();
  primary?.remove();
});

describe.skipIf(!ownPostgresRunsHere)("reads with a streaming replica", () => {
  it("go to the replica once it has replayed this process's last commit, waiting a moment for it", async () => {
    await db.transaction((tx) => tx.query("INSERT INTO marks VALUES (1)"));
    const before = served();
    expect(await count(db.reads.pool)).toBe(1);
    expect(served()).toBe(before + 1);
    expect(status().primary.behind).toBe(0);
  });

  it("read this process's commit on the primary while the replica has not replayed it", async () => {
    await replica.pauseReplay();
    try {
      await db.transaction((tx) => tx.query("INSERT INTO marks VALUES (2)"));
      const behind = status().primary.behind;
      expect(await count(db.reads.pool)).toBe(2);
      expect((await db.reads.prisma.$queryRawUnsafe<{ n: number }[]>("SELECT count(*)::int AS n FROM marks"))[0]!.n).toBe(2);
      expect(status().primary.behind).toBe(behind + 2);
      // the replica really has not: a read sent there straight would have missed it
      expect((await replica.query<{ n: number }>("SELECT count(*)::int AS n FROM marks"))[0]!.n).toBe(1);
    } finally {
      await replica.resumeReplay();
    }
    await until("the replica serving again", async () => ((await count(db.reads.pool)) === 2 && status().replicas[0]!.served > 1) || undefined);
  });

  it("read another process's commit once told of it (its NOTIFY), and a replica's older state before", async () => {
    await replica.pauseReplay();
    try {
      await replicaServing();
      await primary.query("INSERT INTO marks VALUES (3)");
      // not told: the replica serves, without the other process's row (what the NOTIFY is for)
      expect(await count(db.reads.pool)).toBe(2);
      db.changedElsewhere();
      expect(await count(db.reads.pool)).toBe(3);
    } finally {
      await replica.resumeReplay();
    }
  });

  it("read another machine's commit when a caller carries its position, before that machine's NOTIFY", async () => {
    await replica.pauseReplay();
    try {
      await replicaServing();
      const n = await count(db.reads.pool);
      // another machine's commit, and the position its answer said
      await primary.query("INSERT INTO marks VALUES (6)");
      const position = (await primary.query<{ position: string }>("SELECT pg_current_wal_insert_lsn()::text AS position"))[0]!.position;
      expect(await count(db.reads.pool)).toBe(n);
      db.readAfter(walPosition(position));
      expect(await count(db.reads.pool)).toBe(n + 1);
      expect(db.readPosition()).toBeGreaterThanOrEqual(walPosition(position));
    } finally {
      await replica.resumeReplay();
    }
  });

  it("take a carried position past the primary's only as far as the primary is", async () => {
    await replicaServing();
    const before = served();
    const ahead = walPositionOf("FFFFFFFF/FFFFFFFF")!;
    db.readAfter(ahead);
    // the primary was asked: the fence is where it is, and the replica, caught up with that, serves
    expect(await count(db.reads.pool)).toBeGreaterThan(0);
    expect(served()).toBe(before + 1);
    expect(db.readPosition()).toBeLessThan(ahead);
  });

  it("read WAL positions as PostgreSQL writes them, and nothing else", () => {
    for (const text of ["0/0", "16/B374D848", "FFFFFFFF/FFFFFFFF"]) expect(walText(walPositionOf(text)!)).toBe(text);
    expect(walPositionOf("16/b374d848")).toBe(walPositionOf("16/B374D848"));
    for (const bad of ["", "0/", "/1", "1/2/3", "G/1", "0x1/2", "123456789/1", " 0/1"]) expect(walPositionOf(bad), bad).toBeUndefined();
  });

  it("skip a replica lagging past the bound, and use it again once it has caught up", async () => {
    await replica.pauseReplay();
    try {
      // the primary moves on; the replica stays where it is
      await until(
        "the replica unusable for its lag",
        async () => {
          await primary.query("INSERT INTO marks VALUES (4)");
          return status().replicas[0]!.usable === false || undefined;
        },
        10_000,
      );
      expect(status().replicas[0]!.lagSeconds).toBeGreaterThan(1);
      const none = status().primary.no_replica;
      await count(db.reads.pool);
      expect(status().primary.no_replica).toBe(none + 1);
    } finally {
      await replica.resumeReplay();
    }
    await until("the replica usable again", () => status().replicas[0]!.usable || undefined, 10_000);
    expect(status().replicas[0]!.lagSeconds).toBe(0);
  });

  it("skip a replica URL that names another database of the replica: its reads would not be ours", async () => {
    const other = await openDatabase({
      databaseUrl: primary.url,
      dataDir: "/nonexistent",
      poolSize: 2,
      replicas: { urls: [replica.url.replace(/\/postgres$/, "/template1")], poolSize: 2, maxLagMs: 1_000, waitMs: 20 },
    });
    try {
      expect(await count(other.reads.pool)).toBe((await primary.query<{ n: number }>("SELECT count(*)::int AS n FROM marks"))[0]!.n);
      expect(other.readStatus()).toMatchObject({ replicas: [{ up: false, served: 0 }], primary: { no_replica: 1 } });
    } finally {
      await other.close();
    }
  });

  it("stop using a replica that was promoted: it no longer follows the primary", async () => {
    await replica.query("SELECT pg_promote()");
    await until("the promoted replica skipped", () => status().replicas[0]!.up === false || undefined, 10_000);
    const none = status().primary.no_replica;
    await primary.query("INSERT INTO marks VALUES (5)");
    db.changedElsewhere();
    const n = (await primary.query<{ n: number }>("SELECT count(*)::int AS n FROM marks"))[0]!.n;
    expect(await count(db.reads.pool)).toBe(n);
    expect(status().primary.no_replica).toBe(none + 1);
  });
});
