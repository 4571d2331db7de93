import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { transactionContextEnabled } from "../../src/storage/transactions.js";
import { startTestServer, type TestServer } from "../support/server.js";

// Write transactions run on one pg connection with Prisma's model API bound to it (src/storage/transactions.ts).
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

const row = (id: string) => ({ key: `wt-${id}`, expiresAt: new Date(Date.now() + 60_000) });
const stored = async (id: string) => t.server.db.prisma.usedJwtId.findFirst({ where: { key: `wt-${id}` } });

describe("write transactions", () => {
  it("refuse the bound Prisma client outside a transaction, so no statement escapes into autocommit", async () => {
    await expect(t.server.db.writer.usedJwtId.create({ data: row("outside") })).rejects.toThrow(/outside a write transaction/);
    expect(await stored("outside")).toBeNull();
  });

  it("commit Prisma's statements and the connection's own together, and roll both back together", async () => {
    await t.server.db.transaction(async (sql) => {
      await t.server.db.writer.usedJwtId.create({ data: row("both-1") });
      await sql.query("INSERT INTO used_jwt_ids (key, expires_at) VALUES ($1, now())", ["wt-both-2"]);
    });
    expect(await stored("both-1")).not.toBeNull();
    expect(await stored("both-2")).not.toBeNull();

    await expect(
      t.server.db.transaction(async (sql) => {
        await t.server.db.writer.usedJwtId.create({ data: row("gone-1") });
        await sql.query("INSERT INTO used_jwt_ids (key, expires_at) VALUES ($1, now())", ["wt-gone-2"]);
        throw new Error("the command failed");
      }),
    ).rejects.toThrow("the command failed");
    expect(await stored("gone-1")).toBeNull();
    expect(await stored("gone-2")).toBeNull();
  });

  it("keep lookups of concurrent transactions apart (Prisma would batch same-tick findUnique calls into one query)", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let inserted!: () => void;
    const ready = new Promise<void>((r) => (inserted = r));
    let read!: () => void;
    const bHasRead = new Promise<void>((r) => (read = r));
    // A inserts without committing; B and A look the row up in the same tick. A commits only after B's
    // lookup has answered: B can see the row only if its lookup ran on A's connection.
    const a = t.server.db.transaction(async () => {
      await t.server.db.writer.usedJwtId.create({ data: row("apart") });
      inserted();
      await held;
      const found = await t.server.db.writer.usedJwtId.findUnique({ where: { key: "wt-apart" } });
      await bHasRead;
      return found;
    });
    await ready;
    const b = t.server.db.transaction(async () => {
      const lookups = [t.server.db.writer.usedJwtId.findUnique({ where: { key: "wt-apart" } })];
      release();
      const results = await Promise.all(lookups);
      read();
      return results;
    });
    const [seenByA, [seenByB]] = await Promise.all([a, b]);
    expect(seenByA?.key).toBe("wt-apart");
    // B never sees A's uncommitted row.
    expect(seenByB).toBeNull();
  });

  it("switch their async context off when none runs, and keep it for one that outlives another", async () => {
    let aDone!: () => void;
    const aEnded = new Promise<void>((r) => (aDone = r));
    let bStarted!: () => void;
    const bRunning = new Promise<void>((r) => (bStarted = r));
    const b = t.server.db.transaction(async () => {
      bStarted();
      await aEnded;
      // A has ended; B's statements still go to B's connection, inside B's transaction.
      expect(transactionContextEnabled()).toBe(true);
      await t.server.db.writer.usedJwtId.create({ data: row("outlives") });
      return t.server.db.writer.usedJwtId.findUnique({ where: { key: "wt-outlives" } });
    });
    await bRunning;
    await t.server.db.transaction(async () => {
      await t.server.db.writer.usedJwtId.create({ data: row("ends-first") });
    });
    aDone();
    expect((await b)?.key).toBe("wt-outlives");
    expect(transactionContextEnabled()).toBe(false);
    expect(await stored("ends-first")).not.toBeNull();
    expect(await stored("outlives")).not.toBeNull();
    // Off, the writer still refuses; the next transaction switches the context on again.
    await expect(t.server.db.writer.usedJwtId.create({ data: row("off") })).rejects.toThrow(/outside a write transaction/);
    await t.server.db.transaction(async () => {
      await t.server.db.writer.usedJwtId.create({ data: row("on-again") });
    });
    expect(await stored("on-again")).not.toBeNull();
  });

  it("turn a transaction Prisma opens inside one into a savepoint: it ends with the surrounding one", async () => {
    await expect(
      t.server.db.transaction(async () => {
        await t.server.db.writer.$transaction(async (inner) => {
          await inner.usedJwtId.create({ data: row("inner") });
        });
        // Had the inner COMMIT ended the transaction, the row would survive this.
        throw new Error("outer failed");
      }),
    ).rejects.toThrow("outer failed");
    expect(await stored("inner")).toBeNull();

    await t.server.db.transaction(async () => {
      await t.server.db.writer.$transaction(async (inner) => inner.usedJwtId.create({ data: row("inner-kept") }));
    });
    expect(await stored("inner-kept")).not.toBeNull();
  });

  it("find rows by a compound unique key through findUnique", async () => {
    const found = await t.server.db.transaction(async () =>
      t.server.db.writer.setting.findUnique({ where: { kind_ownerType_ownerId: { kind: "nothing", ownerType: "system", ownerId: "" } } }),
    );
    expect(found).toBeNull();
  });

  describe("open with their first statement", () => {
    /** Runs `fn` as a transaction and counts the server's answers (ReadyForQuery: one per round trip) on its connection. */
    async function roundTrips(fn: Parameters<typeof t.server.db.transaction>[0]) {
      let answers = 0;
      const count = () => answers++;
      let connection: { on(e: string, f: () => void): void; off(e: string, f: () => void): void } | undefined;
      const onAcquire = (client: unknown) => {
        connection = (client as { connection: typeof connection }).connection;
        connection!.on("readyForQuery", count);
      };
      t.server.db.pool.once("acquire", onAcquire);
      try {
        const result = await t.server.db.transaction(fn);
        return { result, answers };
      } finally {
        connection?.off("readyForQuery", count);
      }
    }

    it("a statement with parameters takes BEGIN and the idle limit along: two statements and COMMIT are three round trips, not four", async () => {
      const { result, answers } = await roundTrips(async (sql) => {
        // The first statement's own result, not the opening statements' answers.
        const first = await sql.query("INSERT INTO used_jwt_ids (key, expires_at) VALUES ($1, now()) RETURNING key", ["wt-first-1"]);
        expect({ command: first.command, rowCount: first.rowCount, rows: first.rows }).toEqual({
          command: "INSERT",
          rowCount: 1,
          rows: [{ key: "wt-first-1" }],
        });
        const { rows } = await sql.query<{ limit: string; open: boolean }>(
          "SELECT current_setting('idle_in_transaction_session_timeout') AS limit, now() = statement_timestamp() AS open WHERE $1::int = 1",
          [1],
        );
        return rows[0];
      });
      expect(answers).toBe(3);
      // Inside a transaction: the statement after the first does not start at the transaction's start.
      expect(result).toEqual({ limit: "30s", open: false });
      expect(await stored("first-1")).not.toBeNull();
    });

    it("roll back a first statement that took BEGIN along, and leave the connection usable after a failed one", async () => {
      await expect(
        t.server.db.transaction(async (sql) => {
          await sql.query("INSERT INTO used_jwt_ids (key, expires_at) VALUES ($1, now())", ["wt-first-gone"]);
          throw new Error("the command failed");
        }),
      ).rejects.toThrow("the command failed");
      expect(await stored("first-gone")).toBeNull();

      for (let i = 0; i < 3; i++) {
        await expect(
          t.server.db.transaction((sql) => sql.query("INSERT INTO used_jwt_ids (key, expires_at) VALUES ($1, now())", ["wt-first-1"])),
        ).rejects.toMatchObject({ code: "23505" });
      }
      await t.server.db.transaction((sql) => sql.query("INSERT INTO used_jwt_ids (key, expires_at) VALUES ($1, now())", ["wt-first-2"]));
      expect(await stored("first-2")).not.toBeNull();
      // A value pg cannot send fails before the statement runs; the transaction it opened is rolled back.
      const unsendable = {
        toPostgres: () => {
          throw new Error("no such value");
        },
      };
      await expect(t.server.db.transaction((sql) => sql.query("INSERT INTO used_jwt_ids (key, expires_at) VALUES ($1, now())", [unsendable]))).rejects.toThrow(
        "no such value",
      );
      await t.server.db.transaction((sql) => sql.query("INSERT INTO used_jwt_ids (key, expires_at) VALUES ($1, now())", ["wt-first-3"]));
      expect(await stored("first-3")).not.toBeNull();
    });

    it("keep two statements sent at once as the first in order, both inside the transaction", async () => {
      await expect(
        t.server.db.transaction(async (sql) => {
          const insert = (key: string) => sql.query("INSERT INTO used_jwt_ids (key, expires_at) VALUES ($1, now())", [key]);
          await Promise.all([insert("wt-at-once-1"), insert("wt-at-once-2")]);
          throw new Error("undo both");
        }),
      ).rejects.toThrow("undo both");
      expect(await stored("at-once-1")).toBeNull();
      expect(await stored("at-once-2")).toBeNull();
    });

    it("send BEGIN on its own before a statement without parameters, and nothing at all for a transaction without statements", async () => {
      const plain = await roundTrips(async (sql) => {
        const { rows } = await sql.query<{ n: number }>("SELECT 1 AS n; ");
        await sql.query("INSERT INTO used_jwt_ids (key, expires_at) VALUES ('wt-plain', now())");
        return rows[0]?.n;
      });
      expect(plain).toEqual({ result: 1, answers: 4 });
      expect(await stored("plain")).not.toBeNull();
      // Statements sent while that BEGIN is on its way wait for it: both run inside the transaction.
      await expect(
        t.server.db.transaction(async (sql) => {
          const insert = (key: string) => sql.query(`INSERT INTO used_jwt_ids (key, expires_at) VALUES ('${key}', now())`);
          await Promise.all([insert("wt-plain-1"), insert("wt-plain-2")]);
          throw new Error("undo both");
        }),
      ).rejects.toThrow("undo both");
      expect(await stored("plain-1")).toBeNull();
      expect(await stored("plain-2")).toBeNull();

      const empty = await roundTrips(async () => "nothing sent");
      expect(empty).toEqual({ result: "nothing sent", answers: 0 });
    });
  });
});
