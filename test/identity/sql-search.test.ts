import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countRows, findPage, MATCH_COST_IN_ROWS, readThroughFilter } from "../../src/query/sql-search.js";
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
        expect(await findPage(db, "user", narrow, { ...args, throughFilter: true }), label).toEqual(await db.prisma.user.findMany({ ...args, select: narrow }));
      }
      expect(await countRows(db, "user", where), JSON.stringify(where)).toBe(await db.prisma.user.count({ where }));
    }
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

  it("read a page through a text filter only when its matches cost less than walking the order would", async () => {
    const db = t.server.db;
    await db.pool.query("ANALYZE users");
    const { rows } = await db.pool.query("SELECT reltuples::float8 AS n FROM pg_class WHERE oid = 'users'::regclass");
    const table = Number(rows[0].n);
    const page = { skip: 0, take: 100 };
    // The largest total read through the filter: total² × cost ≤ (skip + take) × rows
    const most = Math.floor(Math.sqrt((page.take * table) / MATCH_COST_IN_ROWS));
    const pattern = { username: { contains: "a" } };
    expect(await readThroughFilter(db, "user", pattern, Promise.resolve(0), page)).toBe(true);
    expect(await readThroughFilter(db, "user", pattern, Promise.resolve(most), page)).toBe(true);
    expect(await readThroughFilter(db, "user", pattern, Promise.resolve(most + 1), page)).toBe(false);
    // Deeper pages walk further, so more matches are worth reading through the filter.
    expect(await readThroughFilter(db, "user", pattern, Promise.resolve(most + 1), { skip: 900, take: 100 })).toBe(true);
    // Without a text pattern, the planner's estimates are its own: equality and ranges are left to it.
    expect(await readThroughFilter(db, "user", { username: "a", state: { in: ["locked"] } }, Promise.resolve(0), page)).toBe(false);
  });
});
