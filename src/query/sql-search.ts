import type { Database } from "../storage/database.js";

/**
 * Searches read their pages through the pool (`pg`) rather than Prisma's model API. The same page of 100 users
 * cost Node 2.1 ms through `findMany` and 0.6 ms as the same SQL through `pg` (docs/performance.md): Prisma's
 * query interpreter and row materialisation, on every page. The searches keep their where clauses in Prisma's
 * filter form (typed by the generated client, built in one place per resource); this module turns the part of
 * that form they use into SQL, names columns as the schema maps them, and returns rows keyed by field name as
 * Prisma would. An operator it does not know is refused at once rather than read as something else.
 */

interface Field {
  column: string;
  type: string;
}

interface Model {
  table: string;
  fields: Map<string, Field>;
}

interface RuntimeDataModel {
  models: Record<string, { dbName: string | null; fields: { name: string; kind: string; type: string; dbName?: string | null }[] }>;
}

const models = new WeakMap<object, Map<string, Model>>();

/** The schema's mapping of a model (by its client property name, `user`, `loginSession`) to table and columns. */
function modelOf(db: Database, name: string): Model {
  let known = models.get(db.reads.prisma);
  if (!known) {
    known = new Map();
    models.set(db.reads.prisma, known);
  }
  const cached = known.get(name);
  if (cached) return cached;
  // The generated client's own data model (schema.prisma's names and @map/@@map): there is no public accessor.
  const runtime = (db.reads.prisma as unknown as { _runtimeDataModel?: RuntimeDataModel })._runtimeDataModel;
  const model = runtime?.models[name.charAt(0).toUpperCase() + name.slice(1)];
  if (!model) throw new Error(`no model ${name} in the Prisma client's data model`);
  const fields = new Map(model.fields.filter((f) => f.kind === "scalar").map((f) => [f.name, { column: f.dbName ?? f.name, type: f.type }]));
  const built = { table: model.dbName ?? name, fields };
  known.set(name, built);
  return built;
}

/** PostgreSQL's type of the elements of a list field, by the schema's scalar type. */
const elementTypes: Record<string, string> = { String: "text", Int: "integer", BigInt: "bigint", Boolean: "boolean" };

const quote = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`;

type Where = Record<string, unknown>;

/** Conditions that must all hold: TRUE for none. */
const allOf = (parts: string[]) => (parts.length === 0 ? "TRUE" : parts.length === 1 ? parts[0]! : `(${parts.join(" AND ")})`);

class Sql {
  readonly values: unknown[] = [];
  /** Whether the where clause matches text patterns (LIKE, ILIKE). */
  matchesText = false;
  constructor(private readonly model: Model) {}

  param(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  column(field: string): { sql: string; field: Field } {
    const f = this.model.fields.get(field);
    if (!f) throw new Error(`no field ${field} in ${this.model.table}`);
    return { sql: quote(f.column), field: f };
  }

  where(where: Where | Where[] | undefined): string {
    if (where === undefined) return "TRUE";
    const parts = (Array.isArray(where) ? where : [where]).flatMap((w) =>
      Object.entries(w)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => this.entry(k, v)),
    );
    return allOf(parts);
  }

  private entry(key: string, value: unknown): string {
    if (key === "AND") return this.where(value as Where | Where[]);
    if (key === "OR") {
      const list = value as Where[];
      return list.length === 0 ? "FALSE" : `(${list.map((w) => this.where(w)).join(" OR ")})`;
    }
    if (key === "NOT") return `NOT ${this.where(value as Where | Where[])}`;
    const { sql: col, field } = this.column(key);
    if (value === null) return `${col} IS NULL`;
    if (typeof value !== "object" || value instanceof Date) return `${col} = ${this.param(value)}`;
    return this.conditions(col, field, value as Record<string, unknown>);
  }

  /** `{ equals, in, not, has, gt, gte, lt, lte, startsWith, endsWith, contains, mode }` on one column, as Prisma reads them. */
  private conditions(col: string, field: Field, filter: Record<string, unknown>): string {
    const insensitive = filter.mode === "insensitive";
    const like = insensitive ? "ILIKE" : "LIKE";
    const parts: string[] = [];
    for (const [op, v] of Object.entries(filter)) {
      if (v === undefined || op === "mode") continue;
      if (insensitive || op === "startsWith" || op === "endsWith" || op === "contains") this.matchesText = true;
      switch (op) {
        case "equals":
          parts.push(v === null ? `${col} IS NULL` : insensitive ? `${col} ILIKE ${this.param(v)}` : `${col} = ${this.param(v)}`);
          break;
        case "in":
          parts.push((v as unknown[]).length === 0 ? "FALSE" : `${col} = ANY(${this.param(v)})`);
          break;
        case "not":
          if (v === null) parts.push(`${col} IS NOT NULL`);
          else if (typeof v === "object" && !(v instanceof Date)) parts.push(`NOT ${this.conditions(col, field, v as Record<string, unknown>)}`);
          else parts.push(`${col} <> ${this.param(v)}`);
          break;
        case "has":
          // Containment, as Prisma writes it: the form a GIN index on the array serves.
          parts.push(`${col} @> ARRAY[${this.param(v)}]::${elementTypes[field.type] ?? "text"}[]`);
          break;
        case "gt":
        case "gte":
        case "lt":
        case "lte":
          parts.push(`${col} ${{ gt: ">", gte: ">=", lt: "<", lte: "<=" }[op]} ${this.param(v)}`);
          break;
        // The callers escape LIKE's wildcards in the value (list.ts textFilter), as Prisma expects of them too.
        case "startsWith":
          parts.push(`${col} ${like} ${this.param(`${v}%`)}`);
          break;
        case "endsWith":
          parts.push(`${col} ${like} ${this.param(`%${v}`)}`);
          break;
        case "contains":
          parts.push(`${col} ${like} ${this.param(`%${v}%`)}`);
          break;
        default:
          throw new Error(`the search filter operator ${op} is not supported (${this.model.table}.${field.column})`);
      }
    }
    return allOf(parts);
  }
}

export interface PageArgs {
  where: unknown;
  orderBy: Record<string, "asc" | "desc">[];
  skip?: number | undefined;
  take?: number | undefined;
  /** How the page is read (see `pagePlan`); by default as the planner likes. */
  plan?: PagePlan | undefined;
}

/** How a page of a text search is read (`pagePlan`). */
export type PagePlan =
  /** As the planner likes: for an order with an index, walking it and filtering each row. */
  | { read: "walk" }
  /** Every match found through the filter's index first, then sorted. */
  | { read: "throughFilter" }
  /**
   * The first `rows` rows of `scope` in order, filtered; when they hold less than a full page, the page is read
   * through the filter after all. (Only a full page proves the walk went far enough: a shorter one may be the
   * last page, or may have stopped short of matches a stale total does not count.)
   */
  | { read: "boundedWalk"; scope: unknown; rows: number };

/** A page of `model`'s rows: the selected fields (all without `select`), keyed by field name, with Prisma's types. */
export async function findPage<R>(db: Database, modelName: string, select: Record<string, true> | undefined, args: PageArgs): Promise<R[]> {
  const model = modelOf(db, modelName);
  const sql = new Sql(model);
  const fields = select ? Object.keys(select) : [...model.fields.keys()];
  const order = args.orderBy.flatMap((o) => Object.entries(o).map(([f, d]) => [f, d === "asc" ? "ASC" : "DESC"] as const));
  const selected = (names: string[]) => names.map((f) => `${sql.column(f).sql} AS ${quote(f)}`).join(", ");
  // A function: a where clause's values are numbered in the order the text is written.
  const from = () => `FROM "public".${quote(model.table)} WHERE ${sql.where(args.where as Where)}`;
  const orderByColumns = order.length ? ` ORDER BY ${order.map(([f, d]) => `${sql.column(f).sql} ${d}`).join(", ")}` : "";
  const plan = args.plan ?? { read: "walk" };
  let text: string;
  if (plan.read === "throughFilter") {
    // MATERIALIZED keeps the planner from pulling the LIMIT into the scan of the matches.
    const sortOnly = order.map(([f]) => f).filter((f) => !fields.includes(f));
    text = `WITH m AS MATERIALIZED (SELECT ${selected([...fields, ...sortOnly])} ${from()}) SELECT ${fields.map(quote).join(", ")} FROM m`;
    if (order.length) text += ` ORDER BY ${order.map(([f, d]) => `${quote(f)} ${d}`).join(", ")}`;
  } else if (plan.read === "boundedWalk") {
    // The inner LIMIT bounds the rows walked along the order's index; the columns keep their names through `w`.
    const walked = `SELECT * FROM "public".${quote(model.table)} WHERE ${sql.where(plan.scope as Where)}${orderByColumns} LIMIT ${sql.param(plan.rows)}`;
    text = `SELECT ${selected(fields)} FROM (${walked}) AS w WHERE ${sql.where(args.where as Where)}${orderByColumns}`;
  } else {
    text = `SELECT ${selected(fields)} ${from()}${orderByColumns}`;
  }
  if (args.take !== undefined) text += ` LIMIT ${sql.param(args.take)}`;
  if (args.skip) text += ` OFFSET ${sql.param(args.skip)}`;
  const { rows } = await db.reads.pool.query(text, sql.values);
  if (plan.read === "boundedWalk" && rows.length < (args.take ?? Number.POSITIVE_INFINITY)) {
    return findPage(db, modelName, select, { ...args, plan: { read: "throughFilter" } });
  }
  // pg gives int8 as text and bytea as Buffer; Prisma gives bigint and Uint8Array (a Buffer is one).
  const bigints = fields.filter((f) => model.fields.get(f)!.type === "BigInt");
  if (bigints.length) for (const row of rows) for (const f of bigints) if (row[f] !== null) row[f] = BigInt(row[f]);
  return rows as R[];
}

/**
 * What reading a match through the filter's index costs, in rows walked along the order's index: matches that
 * lie scattered over the table cost a random heap read each (measured at 100,000 users: 60 µs a match through a
 * trigram index, 2.3 µs a row walked in order).
 */
export const MATCH_COST_IN_ROWS = 25;

/**
 * How far a bounded walk goes, in matches it would meet if they were spread evenly: the page, three standard
 * deviations of chance (the matches a stretch holds vary as a Poisson count does), and five more for pages of one
 * row. Evenly spread matches fill the page within it but about once in a thousand.
 */
const walkBound = (window: number) => window + 3 * Math.sqrt(window) + 5;

/**
 * How a page of a search is read. PostgreSQL walks the sort order's index whenever it expects to meet
 * `skip + take` matches soon, trusting its estimate of how many rows match and assuming they spread evenly along
 * the order. A text pattern's estimate is a guess (1,010 of 100,000 users for any of them here), and when fewer
 * rows match than the page holds, the walk reads every row of the scope; when the matches were created together
 * (`user-42…`), it walked 57,000 of 100,000 users (22 ms) where reading the 1,111 matches and sorting them took
 * 1.2 ms. The total, counted for the answer anyway (and cached), gives the real number of matches:
 * - read through the filter when that costs less than the walk would if the matches were spread evenly
 *   (`total × MATCH_COST_IN_ROWS ≤ (skip + take) × rows / total`);
 * - else walk, but only as far as evenly spread matches would fill the page (`walkBound`); matches that did not
 *   come within it lie bunched somewhere the walk meets late, and are read through the filter after it. Bunched
 *   along the order is bunched in the table too when the order is creation's (rows are stored as they come),
 *   which makes reading them through the filter cheap: 37 heap pages for those 1,111 users;
 * - a bound that covers the table, or a table never analysed (its size unknown): the walk, as the planner likes.
 */
export async function pagePlan(
  db: Database,
  modelName: string,
  query: { where: unknown; scope: unknown },
  total: Promise<number>,
  window: { skip: number; take: number },
): Promise<PagePlan> {
  const sql = new Sql(modelOf(db, modelName));
  sql.where(query.where as Where);
  if (!sql.matchesText) return { read: "walk" };
  const matches = await total;
  const rows = await estimatedRows(db, modelName);
  if (rows < 0) return { read: "walk" };
  const page = window.skip + window.take;
  if (matches * matches * MATCH_COST_IN_ROWS <= page * rows) return { read: "throughFilter" };
  const bound = Math.ceil((walkBound(page) * rows) / matches);
  if (bound >= rows) return { read: "walk" };
  // Bounded only below the matches (walkBound(page) < matches): the page is a full one, unless the total is stale.
  return { read: "boundedWalk", scope: query.scope, rows: bound };
}

const ESTIMATE_TTL_MS = 60_000;
const estimates = new WeakMap<object, Map<string, { rows: number; at: number }>>();

/**
 * The planner's own estimate of a table's rows (`pg_class.reltuples`, kept by ANALYZE and autovacuum), read
 * at most once a minute. Before a table's first ANALYZE it is unknown: then -1, and nothing goes through the filter.
 */
async function estimatedRows(db: Database, modelName: string): Promise<number> {
  let known = estimates.get(db.reads.pool);
  if (!known) {
    known = new Map();
    estimates.set(db.reads.pool, known);
  }
  const cached = known.get(modelName);
  if (cached && Date.now() - cached.at < ESTIMATE_TTL_MS) return cached.rows;
  const table = `"public".${quote(modelOf(db, modelName).table)}`;
  const { rows } = await db.reads.pool.query("SELECT reltuples::float8 AS n FROM pg_class WHERE oid = to_regclass($1)", [table]);
  const estimate = { rows: Number(rows[0]?.n ?? -1), at: Date.now() };
  known.set(modelName, estimate);
  return estimate.rows;
}

/** How many rows of `model` the where clause matches. */
export async function countRows(db: Database, modelName: string, where: unknown): Promise<number> {
  const model = modelOf(db, modelName);
  const sql = new Sql(model);
  const { rows } = await db.reads.pool.query(`SELECT count(*)::int AS n FROM "public".${quote(model.table)} WHERE ${sql.where(where as Where)}`, sql.values);
  return rows[0].n as number;
}
