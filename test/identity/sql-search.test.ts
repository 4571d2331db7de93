import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countRows, findPage, MATCH_COST_IN_ROWS, pagePlan } from "../../src/query/sql-search.js";
import { startTestServer, type TestServer } from "../support/server.js";

// Searches read through the pool with their where clauses in Prisma's form (src/query/sql-search.ts). For every
// form they use, the rows and counts must be exactly what Prisma's own findMany and count return: the same
// rows, in the same order, with the same field names and types (dates, JSON, lists, bigints).
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  const q = (sql: string) => t.server.db.pool.query(sql, [t.instanceId]);
  await q(
    `INSERT INTO users (id, instance_id, org_id, username, login_name, kind, state, display_name, email, data, sequence, created_at, change_date)
     SELECT 'sq' || n, $1, 'o' || (n % 3), CASE WHEN n % 4 = 0 THEN 'Alpha_' ELSE 'beta%' END || n, 'x' || n,
       CASE WHEN n % 5 = 0 THEN 'machine' ELSE 'human' END, CASE WHEN n % 7 = 0 THEN 'locked' ELSE 'initial' END,
       'Name ' || n, CASE WHEN n % 3 = 0 THEN NULL ELSE 'u' || n || '@Example.com' END,
       CASE WHEN n % 2 = 0 THEN jsonb_build_object('n', n) END, n, now() - n * interval '1 minute', now()
     FROM generate_series(1, 40) n`,
  );
  await q(
    `INSERT INTO user_grants (id, instance_id, org_id, user_id, project_id, role_keys, sequence, created_at, change_date)
     SELECT 'sg' || n, $1, 'o1', 'sq' || n, 'p1', ARRAY['r' || (n % 3), 'all'], 1, now() - n * interval '1 minute', now() FROM generate_series(1, 12) n`,
  );
});
afterAll(() => t?.close());

describe("search pages through the pool", () => {
  const since = new Date(Date.now() - 20 * 60_000);
  const userWheres: object[] = [
    {},
    { instanceId: "instance-that-does-not-exist" },
    { AND: [{ username: { startsWith: "sq" } }] },
    { AND: [{ id: { startsWith: "sq" } }, { OR: [{ kind: "machine" }, { state: { in: ["locked"] } }] }] },
    { id: { startsWith: "sq" }, username: { startsWith: "alpha", mode: "insensitive" } },
    { id: { startsWith: "sq" }, username: { contains: "a\\_", mode: "insensitive" } },
    { id: { startsWith: "sq" }, username: { endsWith: "5" } },
    { id: { startsWith: "sq" }, username: { contains: "%" } },
    { id: { startsWith: "sq" }, email: null },
    { id: { startsWith: "sq" }, email: { not: null } },
    { id: { startsWith: "sq" }, email: { equals: "U2@EXAMPLE.COM", mode: "insensitive" } },
    { id: { startsWith: "sq" }, NOT: { state: "initial" } },
    { id: { startsWith: "sq" }, state: { not: "locked" } },
    // `not` on a column that may be NULL: whatever Prisma does with the NULL rows, the same.
    { id: { startsWith: "sq" }, email: { not: "u1@Example.com" } },
    { id: { startsWith: "sq" }, createdAt: { gte: since } },
    { id: { startsWith: "sq" }, sequence: { gt: 10, lte: 20 } },
    { id: { in: [] } },
    { OR: [] },
    { id: { in: ["sq1", "sq2", "sq30"] } },
  ];

  it("return Prisma's rows for every where form the searches use, with a select and without", async () => {
    const db = t.server.db;
    const select = { id: true, username: true, email: true, emailVerified: true, data: true, createdAt: true, sequence: true } as const;
    for (const where of userWheres) {
      for (const [orderBy, take, skip] of [
        [[{ createdAt: "desc" }, { id: "desc" }], 100, 0],
        [[{ username: "asc" }], 5, 3],
      ] as const) {
        const args = { where, orderBy: orderBy as never, take, skip };
        const label = JSON.stringify(args);
        expect(await findPage(db, "user", select, args), label).toEqual(await db.prisma.user.findMany({ ...args, select }));
        expect(await findPage(db, "user", undefined, args), label).toEqual(await db.prisma.user.findMany(args));
        // Through the filter's index (the matches first, then sorted), by a column the select may lack: the same.
        const narrow = { id: true, username: true } as const;
        const prisma = await db.prisma.user.findMany({ ...args, select: narrow });
        expect(await findPage(db, "user", narrow, { ...args, plan: { read: "throughFilter" } }), label).toEqual(prisma);
        // Walking a bounded stretch of the whole table: far enough to fill the page, or one row and then through the filter.
        for (const rows of [1_000, 1]) {
          const plan = { read: "boundedWalk" as const, scope: {}, rows };
          expect(await findPage(db, "user", narrow, { ...args, plan }), `${label} walking ${rows}`).toEqual(prisma);
        }
      }
      expect(await countRows(db, "user", where), JSON.stringify(where)).toBe(await db.prisma.user.count({ where }));
    }
  });

  it("read a page through the filter after a bounded walk that did not fill it, whatever the total said", async () => {
    const db = t.server.db;
    const args = { where: { id: { startsWith: "sq" } }, orderBy: [{ createdAt: "desc" }, { id: "desc" }] as Record<string, "desc">[], take: 40, skip: 0 };
    const all = await db.prisma.user.findMany({ ...args, select: { id: true } });
    expect(all).toHaveLength(40);
    // A walk that stops one match short of the page (the server's own users are newer than the 40): a total
    // counted before the last match came (39) would take its 39 rows for the whole page.
    // (in SQL: a JavaScript Date would cut sq1's microseconds and count sq1 itself)
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM users WHERE created_at > (SELECT created_at FROM users WHERE id = 'sq1')");
    const newer = rows[0].n as number;
    const plan = { read: "boundedWalk" as const, scope: {}, rows: newer + 39 };
    expect(await findPage(db, "user", { id: true }, { ...args, plan })).toEqual(all);
  });

  it("reads lists with `has`, and bigints as bigints", async () => {
    const db = t.server.db;
    for (const where of [{ roleKeys: { has: "r1" } }, { roleKeys: { has: "none" } }, { AND: [{ roleKeys: { has: "all" } }, { id: { in: ["sg1", "sg2"] } }] }]) {
      const args = { where, orderBy: [{ id: "asc" as const }] };
      expect(await findPage(db, "userGrant", undefined, args)).toEqual(await db.prisma.userGrant.findMany(args));
    }
    const events = { where: { position: { gt: 3n } }, orderBy: [{ position: "asc" as const }], take: 5 };
    const rows = await findPage<{ position: bigint }>(db, "event", undefined, events);
    expect(typeof rows[0]!.position).toBe("bigint");
    expect(rows).toEqual(await db.prisma.event.findMany(events));
  });

  it("refuses a filter operator it does not know rather than read it as something else", async () => {
    await expect(findPage(t.server.db, "user", undefined, { where: { username: { search: "x" } }, orderBy: [] })).rejects.toThrow(/operator search/);
    await expect(countRows(t.server.db, "user", { nosuchfield: "x" })).rejects.toThrow(/no field nosuchfield/);
  });

  it("read a page through a text filter when its matches cost less than walking the order would, and bound the walk otherwise", async () => {
    const db = t.server.db;
    // A table large enough for a bounded walk to be shorter than the table.
    await db.pool.query(
      `INSERT INTO users (id, instance_id, org_id, username, login_name, kind, state, display_name, sequence, created_at, change_date)
       SELECT 'pp' || n, $1, 'o1', 'pp' || n, 'pp' || n, 'human', 'initial', 'P', 1, now() - interval '1 day', now() FROM generate_series(1, 1000) n`,
      [t.instanceId],
    );
    await db.pool.query("ANALYZE users");
    const { rows } = await db.pool.query("SELECT reltuples::float8 AS n FROM pg_class WHERE oid = 'users'::regclass");
    const table = Number(rows[0].n);
    const plan = (matches: number, page: { skip: number; take: number }, where: object = { username: { contains: "a" } }) =>
      pagePlan(db, "user", { where, scope: { instanceId: "i" } }, Promise.resolve(matches), page);
    const page = { skip: 0, take: 1 };
    // The largest total read through the filter: total² × cost ≤ (skip + take) × rows
    const most = Math.floor(Math.sqrt((page.take * table) / MATCH_COST_IN_ROWS));
    expect(await plan(0, page)).toEqual({ read: "throughFilter" });
    expect(await plan(most, page)).toEqual({ read: "throughFilter" });
    // More: a walk, only as far as evenly spread matches would fill the page (1 + 3 standard deviations + 5
    // matches), unbounded when that is the whole table.
    const bound = (matches: number) => Math.ceil((9 * table) / matches);
    for (const matches of [most + 1, 9, 10, 100]) {
      expect(await plan(matches, page), `${matches} matches`).toEqual(
        bound(matches) >= table ? { read: "walk" } : { read: "boundedWalk", scope: { instanceId: "i" }, rows: bound(matches) },
      );
    }
    expect(await plan(100, page)).toMatchObject({ read: "boundedWalk" });
    // Deeper pages walk further, so more matches are worth reading through the filter.
    expect(await plan(most + 1, { skip: 900, take: 100 })).toEqual({ read: "throughFilter" });
    // Without a text pattern, the planner's estimates are its own: equality and ranges are left to it.
    expect(await plan(0, page, { username: "a", state: { in: ["locked"] } })).toEqual({ read: "walk" });
  });
});
