import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENTS_CHANNEL, EventStore, parseChangeNotice, type StoredEvent } from "../../src/eventstore/eventstore.js";
import { startTestServer, type TestServer } from "../support/server.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

const counter = (id: string) => ({ aggregateType: "test", aggregateId: id, resourceOwner: "" });

/** A command that decides from what it read: the next count is the aggregate's sequence + 1. */
async function increment(id: string) {
  const es = t.server.es;
  return es.execute(async (w) => {
    const seq = await w.sequenceOf(t.instanceId, "test", id);
    // give a concurrent command the chance to read the same state
    await new Promise((r) => setTimeout(r, 5));
    await w.push(t.instanceId, "test", [{ ...counter(id), type: "test.counter.incremented", payload: { count: seq + 1 } }]);
    return seq + 1;
  });
}

describe("event store", () => {
  it("never loses or doubles a write under concurrent commands on one aggregate: each decides on fresh state", async () => {
    const results = await Promise.allSettled(Array.from({ length: 30 }, () => increment("c1")));
    const ok = results.filter((r) => r.status === "fulfilled");
    for (const r of results) {
      if (r.status === "rejected") expect(ConnectError.from(r.reason).code).toBe(Code.Aborted);
    }
    const events = await t.server.db.prisma.event.findMany({ where: { aggregateType: "test", aggregateId: "c1" }, orderBy: { sequence: "asc" } });
    expect(events.length).toBe(ok.length);
    expect(ok.length).toBeGreaterThan(0);
    events.forEach((e, i) => {
      expect(e.sequence).toBe(i + 1);
      // each decision was made on the state it was appended to
      expect((e.payload as { count: number }).count).toBe(i + 1);
    });
    // Commands on one aggregate queue on its lock instead of failing: none is rejected.
    expect(ok.length).toBe(results.length);
    const positions = events.map((e) => e.position);
    expect([...positions].sort((a, b) => (a < b ? -1 : 1))).toEqual(positions);
  });

  it("under an aggregate's lock, an append reads the previous holder's sequence itself: no conflict, no rerun", async () => {
    const es = t.server.es;
    const before = es.stats.retried;
    await Promise.all(
      Array.from({ length: 20 }, () =>
        es.execute(async (w) => {
          await w.lock(t.instanceId, "test", "l1");
          await new Promise((r) => setTimeout(r, 2));
          await w.push(t.instanceId, "test", [{ ...counter("l1"), type: "test.counter.incremented", payload: {} }]);
        }),
      ),
    );
    expect(es.stats.retried).toBe(before);
    const events = await t.server.db.prisma.event.findMany({ where: { aggregateId: "l1" }, orderBy: { sequence: "asc" } });
    expect(events.map((e) => e.sequence)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it("reruns a command whose append still conflicts, on fresh state", async () => {
    const es = t.server.es;
    const before = es.stats.retried;
    let runs = 0;
    await es.execute(async (w) => {
      runs++;
      await w.sequenceOf(t.instanceId, "test", "c3");
      if (runs === 1) {
        // a write this command did not see takes sequence 1 first (what a writer that skipped the lock would do)
        await w.tx.event.create({
          data: {
            instanceId: t.instanceId,
            aggregateType: "test",
            aggregateId: "c3",
            sequence: 1,
            type: "test.counter.incremented",
            payload: {},
            creator: "other",
            resourceOwner: "",
          },
        });
      }
      await w.push(t.instanceId, "test", [{ ...counter("c3"), type: "test.counter.incremented", payload: { run: runs } }]);
    });
    expect(runs).toBe(2);
    expect(es.stats.retried).toBe(before + 1);
    const events = await t.server.db.prisma.event.findMany({ where: { aggregateId: "c3" }, orderBy: { sequence: "asc" } });
    // the conflicting attempt left nothing behind; the rerun wrote once
    expect(events.map((e) => [e.sequence, e.creator, (e.payload as { run: number }).run])).toEqual([[1, "test", 2]]);
  });

  it("rolls back everything a failing command appended", async () => {
    await expect(
      t.server.es.execute(async (w) => {
        await w.push(t.instanceId, "test", [{ ...counter("c2"), type: "test.counter.incremented", payload: {} }]);
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(await t.server.db.prisma.event.count({ where: { aggregateId: "c2" } })).toBe(0);
  });

  it("delivers to a subscriber at least once, in order, retrying a failed batch, and resumes from the stored position", async () => {
    const es = t.server.es;
    const seen: StoredEvent[] = [];
    let failures = 0;
    const sub = es.subscribe(
      "test-sub",
      async (batch) => {
        if (failures < 1 && batch.some((e) => e.aggregateId === "s1")) {
          failures++;
          throw new Error("target down");
        }
        seen.push(...batch);
      },
      { filter: (e) => e.aggregateType === "test", pollMs: 50, retryMs: 20 },
    );
    await increment("s1");
    await increment("s1");
    await sub.caughtUp();
    expect(failures).toBe(1);
    const s1 = seen.filter((e) => e.aggregateId === "s1").map((e) => e.sequence);
    expect(s1).toEqual([1, 2]);
    await sub.stop();

    await increment("s1");
    const again: StoredEvent[] = [];
    const resumed = es.subscribe("test-sub", async (batch) => void again.push(...batch), { filter: (e) => e.aggregateType === "test", pollMs: 50 });
    await resumed.caughtUp();
    await resumed.stop();
    expect(again.map((e) => `${e.aggregateId}:${e.sequence}`)).toEqual(["s1:3"]);
  });

  it("retries a batch that failed half-way from after the last event its handler reported done", async () => {
    const es = t.server.es;
    const handled: string[] = [];
    let failures = 0;
    const ids = ["half-1", "half-2", "half-3", "half-4"];
    // one commit: the four arrive in one batch
    await es.execute(async (w) => {
      for (const id of ids) await w.push(t.instanceId, "test", [{ ...counter(id), type: "test.counter.incremented", payload: { count: 1 } }]);
    });
    const sub = es.subscribe(
      "half-sub",
      async (batch, done) => {
        for (const e of batch) {
          // the database gone after two calls were made: the handler cannot record the third
          if (e.aggregateId === "half-3" && failures++ === 0) throw new Error("the database went away");
          handled.push(e.aggregateId);
          done(e);
        }
      },
      { filter: (e) => e.aggregateId.startsWith("half-"), pollMs: 50, retryMs: 20 },
    );
    await sub.caughtUp();
    await sub.stop();
    expect(failures).toBe(2);
    expect(handled).toEqual(ids);
  });

  it("lets the subscriptions that stand at the same place share one read of the log per commit", async () => {
    // A store of its own, so that only these two subscriptions read through it (the server runs two more).
    const es = new EventStore(t.server.db);
    const seen = { a: [] as string[], b: [] as string[] };
    const sub = (name: "a" | "b", batchSize: number) =>
      es.subscribe(`shared-${name}`, async (batch) => void seen[name].push(...batch.map((e) => e.aggregateId)), {
        filter: (e) => e.aggregateId.startsWith("shared-"),
        batchSize,
        // polls, which read the log whatever was committed, stay out of the waves (a busy machine made them
        // several seconds long: 20 reads for 10 commits with a poll every 500 ms)
        pollMs: 10_000,
      });
    const subs = [sub("a", 100), sub("b", 3)];
    await Promise.all(subs.map((x) => x.caughtUp()));
    const before = es.stats.logReads;
    const waves = 10;
    for (let i = 0; i < waves; i++) {
      await increment(`shared-${i}`);
      await new Promise((r) => setTimeout(r, 120));
    }
    await Promise.all(subs.map((x) => x.caughtUp()));
    const ids = Array.from({ length: waves }, (_, i) => `shared-${i}`);
    expect(seen.a).toEqual(ids);
    expect(seen.b).toEqual(ids);
    // Two subscriptions reading apart would make at least two reads a commit; together they make about one.
    expect(es.stats.logReads - before).toBeLessThan(2 * waves);
    await Promise.all(subs.map((x) => x.stop()));
  });

  it("reads commits announced close together in one batch, and stores the cursor of batches with nothing wanted lazily", async () => {
    const es = t.server.es;
    const batches: number[] = [];
    const storedCursor = async () => (await t.server.db.prisma.subscription.findFirst({ where: { name: "lazy-sub" } }))?.position;
    const sub = es.subscribe("lazy-sub", async (b) => void batches.push(b.length), {
      filter: (e) => e.aggregateId.startsWith("wanted"),
      pollMs: 10_000,
      // long enough that five commits sent together are announced within it on a busy machine
      coalesceMs: 2000,
      storeEveryMs: 60_000,
    });
    await sub.caughtUp();
    const start = await storedCursor();
    // Ten commits announced within the coalescing window: read together, none wanted, cursor not stored.
    await Promise.all(Array.from({ length: 10 }, (_, i) => increment(`skipped-${i}`)));
    await sub.caughtUp();
    expect(batches).toEqual([]);
    expect(await storedCursor()).toBe(start);
    // Wanted events in one burst arrive as one batch, and their cursor is stored at once.
    await Promise.all(Array.from({ length: 5 }, (_, i) => increment(`wanted-${i}`)));
    await expect.poll(() => batches.reduce((a, b) => a + b, 0), { timeout: 15_000 }).toBe(5);
    expect(batches).toEqual([5]);
    const latest = await es.latest();
    await expect.poll(storedCursor, { timeout: 5000 }).toBe(latest.position);
    await increment("skipped-late");
    await sub.caughtUp();
    // Stopping stores what was skipped since, so a restart does not read it again.
    await sub.stop();
    expect(await storedCursor()).toBe((await es.latest()).position);
  });

  it("the notification worker's subscription stores its cursor for events that plan a message, not for every write", async () => {
    const stored = async () => (await t.server.db.prisma.subscription.findFirst({ where: { name: "notifications" } }))?.position;
    const until = async (ok: () => Promise<boolean>) => {
      for (let i = 0; i < 100 && !(await ok()); i++) await new Promise((r) => setTimeout(r, 50));
    };
    // A user with an address plans a verification mail: wanted, so the cursor is stored at once.
    const before = await stored();
    const r = await fetch(`${t.url}/resources/v3alpha/users`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.adminPat}`, "content-type": "application/json" },
      body: JSON.stringify({ username: "cursor-mail", human: { profile: { givenName: "C", familyName: "M" }, email: { address: "cm@example.com" } } }),
    });
    expect(r.status).toBe(201);
    const written = (await t.server.es.latest()).position;
    await until(async () => ((await stored()) ?? 0n) >= written);
    const afterMail = await stored();
    expect(afterMail).not.toBe(before);
    expect(afterMail! >= written).toBe(true);
    // Writes that plan nothing move the worker past them without a write of its cursor (within its 5 s).
    for (let i = 0; i < 5; i++) await increment(`no-mail-${i}`);
    await new Promise((r) => setTimeout(r, 500));
    expect(await stored()).toBe(afterMail);
  });

  it("runs a subscription in one process at a time: a second of the same name waits, and takes over when the first stops or dies", async () => {
    const es = t.server.es;
    const seen: { by: string; id: string }[] = [];
    const subscriber = (by: string) =>
      es.subscribe("held-sub", async (b) => void seen.push(...b.map((e) => ({ by, id: e.aggregateId }))), {
        filter: (e) => e.aggregateId.startsWith("held-"),
        pollMs: 50,
        leaseS: 1,
      });
    const first = subscriber("first");
    await first.caughtUp();
    const second = subscriber("second");
    for (let i = 0; i < 5; i++) await increment(`held-${i}`);
    await Promise.all([first.caughtUp(), second.caughtUp()]);
    expect(first.holding()).toBe(true);
    expect(second.holding()).toBe(false);
    expect(seen).toEqual([0, 1, 2, 3, 4].map((i) => ({ by: "first", id: `held-${i}` })));
    // the holder stops: the other goes on from the stored cursor, each event still handed over once
    await first.stop();
    await increment("held-5");
    await second.caughtUp();
    expect(second.holding()).toBe(true);
    expect(seen.map((x) => x.id)).toEqual([0, 1, 2, 3, 4, 5].map((i) => `held-${i}`));
    expect(seen.at(-1)).toEqual({ by: "second", id: "held-5" });
    // a holder that died without stopping (its lease left as it was): another takes over once the lease runs out
    await second.stop();
    await t.server.db.pool.query("UPDATE subscriptions SET owner = 'a-process-killed', lease_until = now() + interval '1 second' WHERE name = 'held-sub'");
    const third = subscriber("third");
    await increment("held-6");
    await third.caughtUp();
    expect(third.holding()).toBe(true);
    expect(seen.at(-1)).toEqual({ by: "third", id: "held-6" });
    expect(seen.filter((x) => x.id === "held-6")).toHaveLength(1);
    await third.stop();
  });

  it("keeps a subscription's position across a restart of the server", async () => {
    const t2 = await startTestServer();
    try {
      const seen: string[] = [];
      const sub = t2.server.es.subscribe("restart-sub", async (b) => void seen.push(...b.map((e) => e.type)), { pollMs: 50 });
      await sub.caughtUp();
      await sub.stop();
      const before = seen.length;
      expect(before).toBeGreaterThan(0); // the first start's events
      await t2.stop();
      const again = await t2.restart();
      try {
        await again.server.es.execute((w) => w.push(again.instanceId, "test", [{ ...counter("r1"), type: "test.counter.incremented", payload: {} }]));
        const after: string[] = [];
        const resumed = again.server.es.subscribe("restart-sub", async (b) => void after.push(...b.map((e) => e.type)), { pollMs: 50 });
        await resumed.caughtUp();
        await resumed.stop();
        expect(after).toEqual(["test.counter.incremented"]);
      } finally {
        await again.close();
      }
    } catch (e) {
      await t2.close().catch(() => {});
      throw e;
    }
  });

  it("appends to different aggregates in parallel: one waiting command does not hold up another", async () => {
    const es = t.server.es;
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    // A command that appended and then waits (as if its client were slow) ...
    const slow = es.execute(async (w) => {
      await w.push(t.instanceId, "test", [{ ...counter("p1"), type: "test.counter.incremented", payload: {} }]);
      await held;
    });
    await new Promise((r) => setTimeout(r, 100));
    // ... does not block an append to another aggregate: it commits while the first is still open.
    const quick = await Promise.race([
      es.execute((w) => w.push(t.instanceId, "test", [{ ...counter("p2"), type: "test.counter.incremented", payload: {} }])).then(() => "committed"),
      new Promise((r) => setTimeout(() => r("blocked"), 5_000)),
    ]);
    release();
    await slow;
    expect(quick).toBe("committed");
  });

  it("never lets a subscriber skip an event whose transaction took an earlier position and committed later", async () => {
    const es = t.server.es;
    const seen: string[] = [];
    const sub = es.subscribe("late-commit-sub", async (b) => void seen.push(...b.map((e) => e.aggregateId)), {
      filter: (e) => e.aggregateType === "test" && e.aggregateId.startsWith("late-"),
      pollMs: 20,
    });
    await sub.caughtUp();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let appended!: () => void;
    const firstAppended = new Promise<void>((r) => (appended = r));
    const early = es.execute(async (w) => {
      const [e] = await w.push(t.instanceId, "test", [{ ...counter("late-early"), type: "test.counter.incremented", payload: {} }]);
      appended();
      await held;
      return e!.position;
    });
    await firstAppended;
    const { events } = await es.execute((w) => w.push(t.instanceId, "test", [{ ...counter("late-later"), type: "test.counter.incremented", payload: {} }]));
    // The later transaction took a higher position and committed first; the subscriber must wait for the
    // open one instead of moving past it.
    await new Promise((r) => setTimeout(r, 300));
    expect(seen).toEqual([]);
    release();
    const { result: earlyPosition } = await early;
    expect(earlyPosition).toBeLessThan(events[0]!.position);
    await sub.caughtUp();
    await sub.stop();
    expect(seen).toEqual(["late-early", "late-later"]);
  });

  it("tells other processes which aggregates changed, at commit and only at commit", async () => {
    const notices: string[] = [];
    const unlisten = await t.server.db.listen(EVENTS_CHANNEL, (n) => void notices.push(n));
    try {
      await expect(
        t.server.es.execute(async (w) => {
          await w.push(t.instanceId, "test", [{ ...counter("n-rolled-back"), type: "test.counter.incremented", payload: {} }]);
          throw new Error("boom");
        }),
      ).rejects.toThrow("boom");
      await t.server.es.execute((w) =>
        w.push(t.instanceId, "test", [
          { ...counter("n1"), type: "test.counter.incremented", payload: {} },
          { ...counter("n1"), type: "test.counter.incremented", payload: {} },
          { ...counter("n2"), type: "test.counter.incremented", payload: {} },
        ]),
      );
      // Only the notices of this test's aggregates: a commit of an earlier test may still be on its way.
      const mine = () => notices.map(parseChangeNotice).filter((changed) => changed?.some((c) => ["n1", "n2", "n-rolled-back"].includes(c.aggregateId)));
      await expect.poll(() => mine().length).toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, 100));
      expect(mine()).toEqual([
        [
          { aggregateType: "test", aggregateId: "n1" },
          { aggregateType: "test", aggregateId: "n2" },
        ],
      ]);
    } finally {
      await unlisten();
    }
  });
});
