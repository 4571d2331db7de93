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
  let known = models.get(db.prisma);
  if (!known) {
    known = new Map();
    models.set(db.prisma, known);
  }
  const cached = known.get(name);
  if (cached) return cached;
  // The generated client's own data model (schema.prisma's names and @map/@@map): there is no public accessor.
  const runtime = (db.prisma as unknown as { _runtimeDataModel?: RuntimeDataModel })._runtimeDataModel;
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
}

/** A page of `model`'s rows: the selected fields (all without `select`), keyed by field name, with Prisma's types. */
export async function findPage<R>(db: Database, modelName: string, select: Record<string, true> | undefined, args: PageArgs): Promise<R[]> {
  const model = modelOf(db, modelName);
  const sql = new Sql(model);
  const fields = select ? Object.keys(select) : [...model.fields.keys()];
  const columns = fields.map((f) => `${sql.column(f).sql} AS ${quote(f)}`).join(", ");
  const order = args.orderBy.flatMap((o) => Object.entries(o).map(([f, d]) => `${sql.column(f).sql} ${d === "asc" ? "ASC" : "DESC"}`));
  let text = `SELECT ${columns} FROM "public".${quote(model.table)} WHERE ${sql.where(args.where as Where)}`;
  if (order.length) text += ` ORDER BY ${order.join(", ")}`;
  if (args.take !== undefined) text += ` LIMIT ${sql.param(args.take)}`;
  if (args.skip) text += ` OFFSET ${sql.param(args.skip)}`;
  const { rows } = await db.pool.query(text, sql.values);
  // pg gives int8 as text and bytea as Buffer; Prisma gives bigint and Uint8Array (a Buffer is one).
  const bigints = fields.filter((f) => model.fields.get(f)!.type === "BigInt");
  if (bigints.length) for (const row of rows) for (const f of bigints) if (row[f] !== null) row[f] = BigInt(row[f]);
  return rows as R[];
}

/** How many rows of `model` the where clause matches. */
export async function countRows(db: Database, modelName: string, where: unknown): Promise<number> {
  const model = modelOf(db, modelName);
  const sql = new Sql(model);
  const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM "public".${quote(model.table)} WHERE ${sql.where(where as Where)}`, sql.values);
  return rows[0].n as number;
}
