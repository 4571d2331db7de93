// Every filter and sort column of the searches has an index that serves it (prisma/schema.prisma, the
// migration "search_indexes"): the SQL each case sends is captured and EXPLAINed on tables of a
// few thousand rows. Small tables make the planner's choice between an index and a scan a toss-up, so the
// alternatives are priced out: for a filter, every plan but bitmap index scans (a filter must then reach an
// index condition on its column, rather than filter all rows of the instance); for an order, sequential
// scans and sorts (the page must come out of an index in order). Losing an index, or an operator class
// (the username's text_pattern_ops), fails here. Also: what the searches read and return.
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrismaClient } from "../../gen/prisma/client.js";
import { TargetFieldName } from "../../gen/svc/resources/action/v3alpha/target_pb.js";
import { UserFieldName } from "../../gen/svc/resources/user/v3alpha/user_pb.js";
import { targetSearchOf } from "../../src/api/action/search.js";
import { userSearchOf } from "../../src/api/user/search.js";
import { ActionQueries } from "../../src/query/actions.js";
import { ApplicationQueries } from "../../src/query/applications.js";
import { ProjectionCache } from "../../src/query/cache.js";
import { IdpQueries } from "../../src/query/idps.js";
import { InstanceQueries } from "../../src/query/instances.js";
import type { ListWindow, TextMatch } from "../../src/query/list.js";
import { MembershipQueries } from "../../src/query/memberships.js";
import { OrgDomainQueries } from "../../src/query/org-domains.js";
import { OrgQueries } from "../../src/query/orgs.js";
import { ProjectGrantQueries } from "../../src/query/project-grants.js";
import { ProjectQueries } from "../../src/query/projects.js";
import { UserGrantQueries } from "../../src/query/user-grants.js";
import { UserQueries } from "../../src/query/users.js";
import type { Database } from "../../src/storage/database.js";
import { startTestServer, type TestServer } from "../support/server.js";

let t: TestServer;
let pool: pg.Pool;
// A client on the test server's database that reports every statement it sends.
const loggingClient = (p: pg.Pool) => new PrismaClient({ adapter: new PrismaPg(p), log: [{ emit: "event" as const, level: "query" as const }] });
let prisma: ReturnType<typeof loggingClient>;
let captured: { sql: string; params: unknown[] }[] = [];
let db: Database;
const all = { orgIds: "all" as const, projectIds: [] };
const f = (c: string, value: unknown) => ({ case: c, value }) as never;
const window: ListWindow = { skip: 0, take: 100, order: "desc" };

beforeAll(async () => {
  t = await startTestServer();
  pool = new pg.Pool({ ...t.server.db.connection, max: 2 });
  prisma = loggingClient(pool);
  prisma.$on("query", (e) => captured.push({ sql: e.query, params: JSON.parse(e.params) }));
  // Search pages and counts go through the pool (src/query/sql-search.ts): its statements are captured too.
  const capturing = {
    query: (text: string, values?: unknown[]) => {
      captured.push({ sql: text, params: values ?? [] });
      return pool.query(text, values);
    },
  } as unknown as pg.Pool;
  // The searches read through `reads` (src/storage/reads.ts): without replicas the primary's client and pool.
  db = { ...t.server.db, prisma, pool: capturing, reads: { prisma, pool: capturing } } as Database;
  // Projection rows written directly (the plans depend on the tables, not on how rows got there), with
  // names of random-looking text, so that a searched text is as selective as in real data.
  const seed = (sql: string) => pool.query(sql, [t.instanceId]);
  await seed(
    `INSERT INTO users (id, instance_id, org_id, username, login_name, kind, state, display_name, given_name, family_name, email, sequence, created_at, change_date)
     SELECT 'u' || n, $1, 'o' || (n % 40), md5('u' || n), md5('u' || n), CASE WHEN n % 10 = 0 THEN 'machine' ELSE 'human' END,
       CASE WHEN n % 50 = 0 THEN 'locked' ELSE 'initial' END, md5('d' || n), 'Given', 'Family', md5('e' || n) || '@' || (n % 30) || '.example', 1,
       now() - n * interval '1 second', now() - n * interval '1 second'
     FROM generate_series(1, 10000) n`,
  );
  await seed(
    `INSERT INTO targets (id, instance_id, name, target_type, url, timeout_ms, is_async, interrupt_on_error, signing_key, sequence, created_at, change_date)
     SELECT 't' || n, $1, md5('t' || n), 'rest_webhook', 'https://' || md5('h' || n) || '.example', 1000 + n % 10, n % 2 = 0, false, 'k', 1,
       now() - n * interval '1 second', now()
     FROM generate_series(1, 10000) n`,
  );
  await seed(
    `INSERT INTO orgs (id, instance_id, name, primary_domain, state, sequence, created_at, change_date)
     SELECT 'o' || n, $1, md5('o' || n), md5('p' || n) || '.example', 'active', 1, now() - n * interval '1 second', now() FROM generate_series(1, 2000) n`,
  );
  await seed(
    `INSERT INTO projects (id, instance_id, org_id, name, state, project_role_assertion, project_role_check, sequence, created_at, change_date)
     SELECT 'p' || n, $1, 'o' || (n % 40), md5('p' || n), 'active', false, false, 1, now() - n * interval '1 second', now() FROM generate_series(1, 2000) n`,
  );
  await seed(
    `INSERT INTO applications (id, instance_id, org_id, project_id, name, kind, state, client_id, config, sequence, created_at, change_date)
     SELECT 'a' || n, $1, 'o' || (n % 40), 'p' || n, md5('a' || n), 'api', 'active', 'c' || n, '{}', 1, now() - n * interval '1 second', now()
     FROM generate_series(1, 2000) n`,
  );
  await seed(
    `INSERT INTO user_grants (id, instance_id, org_id, user_id, project_id, role_keys, sequence, created_at, change_date)
     SELECT 'g' || n, $1, 'o' || (n % 40), 'u' || n, 'p' || (n % 2000), ARRAY['r' || (n % 100)], 1, now() - n * interval '1 second', now()
     FROM generate_series(1, 4000) n`,
  );
  await seed(
    `INSERT INTO memberships (instance_id, user_id, context_type, context_id, roles, sequence, change_date)
     SELECT $1, 'u' || n, 'org', 'o' || (n % 40), ARRAY[CASE WHEN n % 100 = 0 THEN 'ORG_OWNER' ELSE 'ORG_USER_MANAGER' END], 1, now() - n * interval '1 second'
     FROM generate_series(1, 4000) n`,
  );
  await seed(
    `INSERT INTO idps (id, instance_id, owner_type, owner_id, name, type, owner_policy, options, config, sequence, created_at, change_date)
     SELECT 'i' || n, $1, 'org', 'o' || (n % 40), md5('i' || n), 8, 'activate', '{}', '{"clientId":"c"}', 1, now() - n * interval '1 second', now()
     FROM generate_series(1, 2000) n`,
  );
  // Statistics, and the trigram indexes' pending lists merged (as autovacuum would).
  await pool.query("VACUUM ANALYZE");
});
afterAll(async () => {
  await prisma?.$disconnect();
  await pool?.end();
  await t?.close();
});

interface PlanNode {
  "Node Type": string;
  "Index Name"?: string;
  "Index Cond"?: string;
  "Recheck Cond"?: string;
  Plans?: PlanNode[];
}
const nodesOf = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodesOf)];

/** Runs a search, and returns the plans of the statements it sent to `table` (the page and the count). */
async function plans(table: string, run: () => Promise<unknown>, settings: string[]): Promise<{ sql: string; nodes: PlanNode[] }[]> {
  captured = [];
  await run();
  const mine = captured.filter((c) => c.sql.includes(`FROM "public"."${table}"`));
  expect(mine.length).toBeGreaterThan(0);
  const client = await pool.connect();
  try {
    const out: { sql: string; nodes: PlanNode[] }[] = [];
    for (const c of mine) {
      await client.query("BEGIN");
      for (const s of settings) await client.query(`SET LOCAL ${s} = off`);
      const r = await client.query(`EXPLAIN (FORMAT JSON) ${c.sql}`, c.params);
      await client.query("ROLLBACK");
      out.push({ sql: c.sql, nodes: nodesOf(r.rows[0]["QUERY PLAN"][0].Plan) });
    }
    return out;
  } finally {
    client.release();
  }
}

/** The filter on `column` is an index condition of some bitmap index scan, for the page and for the count. */
async function expectIndexFilter(table: string, column: string | RegExp, run: () => Promise<unknown>) {
  for (const p of await plans(table, run, ["enable_seqscan", "enable_indexscan", "enable_indexonlyscan"])) {
    const conds = p.nodes.filter((n) => n["Index Name"]).map((n) => `${n["Index Name"]}: ${n["Index Cond"] ?? ""}`);
    const served = (c: string) => (typeof column === "string" ? c.includes(column) : column.test(c));
    expect(conds.some(served), `${p.sql}\n${conds.join("\n")}`).toBe(true);
  }
}

/** The page comes out of an index in the requested order: no Sort node. */
async function expectIndexOrder(table: string, run: () => Promise<unknown>) {
  const [page] = (await plans(table, run, ["enable_seqscan", "enable_sort"])).filter((p) => p.sql.includes("ORDER BY"));
  const types = page!.nodes.map((n) => `${n["Node Type"]}${n["Index Name"] ? ` ${n["Index Name"]}` : ""}`);
  expect(
    types.some((x) => x.includes("Sort")),
    `${page!.sql}\n${types.join("\n")}`,
  ).toBe(false);
}

// Values as selective as a search for someone's name: a few characters of one of the seeded names.
const methods = Object.entries({
  equals: "c4ca42",
  equalsIgnoreCase: "C4CA42",
  startsWith: "c4ca42",
  startsWithIgnoreCase: "C4CA42",
  contains: "a0b923",
  containsIgnoreCase: "A0B923",
  endsWith: "75849b",
  endsWithIgnoreCase: "75849B",
}) as [TextMatch, string][];

describe("search plans: every filter and sort column is served by an index", () => {
  const users = (req: object, scope: object = all, w = window) => new UserQueries(db, new ProjectionCache()).search(t.instanceId, scope as never, req, w);
  const targets = (req: object) => new ActionQueries(db, new ProjectionCache(), {} as never).searchTargets(t.instanceId, req, window);

  it("users: text filters on username, display name and email, every method", async () => {
    for (const [match, text] of methods) {
      await expectIndexFilter("users", "username", () => users({ filters: [f("username", { text, match })] }));
      await expectIndexFilter("users", "display_name", () => users({ filters: [f("displayName", { text, match })] }));
      await expectIndexFilter("users", "email", () => users({ filters: [f("email", { text, match })] }));
    }
    // A username prefix is a range of the b-tree with text_pattern_ops, whatever the database's collation.
    const prefix = { text: "c4ca42", match: "startsWith" };
    await expectIndexFilter("users", /^users_instance_id_username_idx: .*username ~>=~ /, () => users({ filters: [f("username", prefix)] }));
  });

  it("users: state, type, organisation, IDs, and the organisation a caller may read", async () => {
    await expectIndexFilter("users", "state", () => users({ filters: [f("state", "locked")] }));
    await expectIndexFilter("users", "kind", () => users({ filters: [f("type", "machine")] }));
    await expectIndexFilter("users", "org_id", () => users({ filters: [f("organizationId", "o1")] }));
    await expectIndexFilter("users", "id", () => users({ filters: [f("inIds", ["u1", "u2"])] }));
    await expectIndexOrder("users", () => users({}, { orgIds: ["o1"], projectIds: [] }));
  });

  it("users: every sort column, both directions", async () => {
    // Every sorting field of the API, as the API names it to the query.
    for (const column of Object.values(UserFieldName).filter((v): v is UserFieldName => typeof v === "number")) {
      const { sort } = userSearchOf({ filters: [], sortingColumn: column } as never);
      await expectIndexOrder("users", () => users({ sort }));
      await expectIndexOrder("users", () => users({ sort }, all, { skip: 0, take: 10, order: "asc" }));
    }
  });

  it("targets: name filters, every method, and every sort column", async () => {
    for (const [match, text] of methods) {
      await expectIndexFilter("targets", "name", () => targets({ filters: [f("name", { text, match })] }));
    }
    for (const column of Object.values(TargetFieldName).filter((v): v is TargetFieldName => typeof v === "number")) {
      await expectIndexOrder("targets", () => targets(targetSearchOf({ filters: [], sortingColumn: column } as never)));
    }
  });

  it("the other resources: default orders and name filters", async () => {
    const cache = () => new ProjectionCache();
    const contains = { text: "A0B923", match: "containsIgnoreCase" };
    await expectIndexOrder("orgs", () => new OrgQueries(db, cache()).search(t.instanceId, all, {}, window));
    await expectIndexFilter("orgs", "name", () => new OrgQueries(db, cache()).search(t.instanceId, all, { filters: [f("name", contains)] }, window));
    await expectIndexFilter("orgs", "primary_domain", () =>
      new OrgQueries(db, cache()).search(t.instanceId, all, { filters: [f("domain", { text: "6f75849b.example", match: "endsWith" })] }, window),
    );
    await expectIndexOrder("projects", () => new ProjectQueries(db, cache()).search(t.instanceId, all, {}, window));
    await expectIndexFilter("projects", "name", () => new ProjectQueries(db, cache()).search(t.instanceId, all, { filters: [f("name", contains)] }, window));
    await expectIndexOrder("applications", () => new ApplicationQueries(db, cache()).search(t.instanceId, all, {}, window));
    await expectIndexFilter("applications", "name", () =>
      new ApplicationQueries(db, cache()).search(t.instanceId, all, { filters: [f("name", contains)] }, window),
    );
    await expectIndexOrder("user_grants", () => new UserGrantQueries(db, cache()).search(t.instanceId, all, {}, window));
    await expectIndexFilter("user_grants", "role_keys", () =>
      new UserGrantQueries(db, cache()).search(t.instanceId, all, { filters: [f("roleKey", "r7")] }, window),
    );
    const visible = {
      instance: true,
      orgs: "all" as const,
      projectOrgs: "all" as const,
      projects: [],
      grantOrgs: "all" as const,
      grantProjects: [],
      grants: [],
    };
    await expectIndexOrder("memberships", () => new MembershipQueries(db, cache()).search(t.instanceId, visible, {}, window));
    await expectIndexFilter("memberships", "roles", () =>
      new MembershipQueries(db, cache()).search(t.instanceId, visible, { filters: [f("role", "ORG_OWNER")] }, window),
    );
    const instance = { type: "instance" as const, id: t.instanceId, instanceId: t.instanceId };
    await expectIndexOrder("idps", () => new IdpQueries(db).search(cache(), instance, {}, window));
    await expectIndexFilter("idps", "name", () => new IdpQueries(db).search(cache(), instance, { filters: [f("name", contains)] }, window));
  });

  it("project grants, organisation domains, instances: their scopes and filters", async () => {
    await pool.query(
      `INSERT INTO project_grants (id, instance_id, project_id, org_id, granted_org_id, role_keys, state, sequence, created_at, change_date)
       SELECT 'pg' || n, $1, 'p' || (n % 2000), 'o' || (n % 40), 'o' || (n / 2000 + 100), '{}', 'active', 1, now() - n * interval '1 second', now()
       FROM generate_series(1, 4000) n`,
      [t.instanceId],
    );
    await pool.query(
      `INSERT INTO org_domains (org_id, instance_id, domain, verified, sequence, created_at, change_date)
       SELECT 'o' || (n % 400), $1, md5('d' || n) || '.example', n % 2 = 0, 1, now() - n * interval '1 second', now() FROM generate_series(1, 4000) n`,
      [t.instanceId],
    );
    await pool.query("ANALYZE project_grants; ANALYZE org_domains");
    const grants = (filters: never[]) => new ProjectGrantQueries(db, new ProjectionCache()).search(t.instanceId, all, [], filters, window);
    await expectIndexOrder("project_grants", () => grants([]));
    await expectIndexFilter("project_grants", "project_id", () => grants([f("projectId", "p7")]));
    await expectIndexFilter("project_grants", "granted_org_id", () => grants([f("grantedOrgId", "o101")]));
    // One organisation's domains, found through the primary key (organisation, domain); they are few, so sorted.
    await expectIndexFilter("org_domains", "org_id", () =>
      new OrgDomainQueries(db, new ProjectionCache()).search("o7", { domainContains: "a_b%", verifiedOnly: true }, window),
    );
    // The system's instances are few: the filters are served, the order is sorted.
    await expectIndexFilter("instances", "id", () => new InstanceQueries(db, new ProjectionCache()).search([{ case: "inIds", value: [t.instanceId] }], window));
    await expectIndexFilter("instances", "id", () =>
      new InstanceQueries(db, new ProjectionCache()).search([{ case: "domain", value: "nowhere.example" }], window),
    );
  });
});

describe("a page of few text matches that lie far along the order", () => {
  it("is read through the filter's index, not by walking the order's index past every other row", async () => {
    // 2,000 users older than all others, all named `zz-…`; the statistics are taken; then all but 111 are
    // renamed. The planner, trusting statistics that say a sixth of the users match and expecting them spread
    // evenly, would walk from the newest user and meet the first match after 10,000 rows.
    await pool.query(
      `INSERT INTO users (id, instance_id, org_id, username, login_name, kind, state, display_name, sequence, created_at, change_date)
       SELECT 'zz' || n, $1, 'o1', 'zz-' || n, 'zz-' || n, 'human', 'initial', 'Z', 1, now() - interval '1 day' - n * interval '1 second', now()
       FROM generate_series(0, 1999) n`,
      [t.instanceId],
    );
    await pool.query("ANALYZE users");
    await pool.query("UPDATE users SET username = 'zy' || substr(username, 3) WHERE id LIKE 'zz%' AND username NOT LIKE 'zz-15%'");
    // A pool of its own: the table's size estimate that earlier searches read is kept for a minute per pool.
    const fresh = { ...db, pool: { query: (text: string, values?: unknown[]) => db.pool.query(text, values) } as unknown as pg.Pool };
    const run = () =>
      new UserQueries(fresh, new ProjectionCache()).search(t.instanceId, all, { filters: [f("username", { text: "zz-", match: "startsWith" })] }, window);
    const [page] = (await plans("users", run, [])).filter((p) => p.sql.includes("ORDER BY"));
    const conds = page!.nodes.filter((n) => n["Index Name"]).map((n) => `${n["Index Name"]}: ${n["Index Cond"] ?? ""}`);
    expect(
      conds.some((c) => c.includes("username")),
      `${page!.sql}\n${conds.join("\n")}`,
    ).toBe(true);
    const { rows, total } = await run();
    expect(total).toBe(111);
    // Newest first: user n was created n seconds before zz-0
    expect(rows.slice(0, 12).map((r) => r.username)).toEqual(["zz-15", ...Array.from({ length: 10 }, (_, i) => `zz-${150 + i}`), "zz-1500"]);
    expect(rows).toHaveLength(100);

    // One row: a walk is expected to meet a match soon (111 of 12,000, if they were spread), but is bounded by
    // where evenly spread matches would surely have come; these are the oldest users, so it meets none within
    // that, and the page is read through the filter after it.
    captured = [];
    const one = await new UserQueries(fresh, new ProjectionCache()).search(
      t.instanceId,
      all,
      { filters: [f("username", { text: "zz-", match: "startsWith" })] },
      { ...window, take: 1 },
    );
    expect(one.rows.map((r) => r.username)).toEqual(["zz-15"]);
    const reads = captured.filter((c) => c.sql.includes('FROM "public"."users"') && c.sql.includes("ORDER BY"));
    expect(reads.map((c) => (c.sql.includes(") AS w ") ? "bounded walk" : c.sql.includes("MATERIALIZED") ? "through the filter" : "walk"))).toEqual([
      "bounded walk",
      "through the filter",
    ]);
    // As far as 111 evenly spread matches would hold 9 (1 + 3 standard deviations + 5): about 1,000 of the 12,000.
    expect(Math.max(...reads[0]!.params.filter((p) => typeof p === "number"))).toBeLessThan(1_500);
  });
});

describe("searches read only what they answer with, and match literally", () => {
  it("reads no password hash, signing key or other column the answer does not show", async () => {
    captured = [];
    const one: ListWindow = { skip: 0, take: 1, order: "desc" };
    await new UserQueries(db, new ProjectionCache()).search(t.instanceId, all, {}, one);
    await new ActionQueries(db, new ProjectionCache(), {} as never).searchTargets(t.instanceId, {}, one);
    const pages = captured.filter((c) => /FROM "public"\."(users|targets)" WHERE .* ORDER BY/.test(c.sql));
    expect(pages).toHaveLength(2);
    for (const column of ["password_hash", "password_failures", "login_name", "signing_key"]) {
      for (const p of pages) expect(p.sql).not.toContain(`"${column}"`);
    }
  });

  it("treats % and _ in a searched text as themselves", async () => {
    await pool.query(
      `INSERT INTO users (id, instance_id, org_id, username, login_name, kind, state, display_name, sequence, created_at, change_date)
       VALUES ('lit1', $1, $2, 'lit_a%b', 'lit_a%b', 'human', 'initial', 'x', 1, now(), now()),
              ('lit2', $1, $2, 'litXaYYb', 'litxayyb', 'human', 'initial', 'x', 1, now(), now())`,
      [t.instanceId, t.defaultOrgId],
    );
    const names = async (text: string, match: TextMatch) =>
      (await new UserQueries(db, new ProjectionCache()).search(t.instanceId, all, { filters: [f("username", { text, match })] }, window)).rows.map(
        (r) => r.username,
      );
    expect(await names("lit_a%b", "startsWith")).toEqual(["lit_a%b"]);
    expect(await names("LIT_A%B", "equalsIgnoreCase")).toEqual(["lit_a%b"]);
    expect(await names("_a%", "contains")).toEqual(["lit_a%b"]);
    expect(await names("%B", "endsWithIgnoreCase")).toEqual(["lit_a%b"]);
    expect((await names("lit", "startsWith")).sort()).toEqual(["litXaYYb", "lit_a%b"]);
  });
});
