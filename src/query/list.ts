import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { countRows, findPage, type PagePlan, pagePlan } from "./sql-search.js";

export type Direction = "asc" | "desc";

/** Which rows of a search's order a page holds: `take` rows after the first `skip`, in the direction `order`. */
export interface ListWindow {
  skip: number;
  take: number;
  order: Direction;
}

/**
 * `value` as a literal in a LIKE pattern. Prisma puts the filters below into LIKE / ILIKE patterns as they
 * are, so `_` and `%` in a searched name would match any character.
 */
const likeLiteral = (value: string) => value.replace(/[\\%_]/g, "\\$&");

/** How a searched text matches a column. */
export type TextMatch =
  | "equals"
  | "equalsIgnoreCase"
  | "startsWith"
  | "startsWithIgnoreCase"
  | "contains"
  | "containsIgnoreCase"
  | "endsWith"
  | "endsWithIgnoreCase";

/** A text filter's criterion: the text, and how it matches. */
export interface TextCriterion {
  text: string;
  match: TextMatch;
}

/** A Prisma string filter for a text criterion (the indexes that serve each: docs/decisions.md, "Searches flat in the data size"). */
export function textFilter({ text, match }: TextCriterion) {
  const insensitive = { mode: "insensitive" as const };
  const pattern = likeLiteral(text);
  switch (match) {
    case "equalsIgnoreCase":
      return { equals: pattern, ...insensitive };
    case "startsWith":
      return { startsWith: pattern };
    case "startsWithIgnoreCase":
      return { startsWith: pattern, ...insensitive };
    case "contains":
      return { contains: pattern };
    case "containsIgnoreCase":
      return { contains: pattern, ...insensitive };
    case "endsWith":
      return { endsWith: pattern };
    case "endsWithIgnoreCase":
      return { endsWith: pattern, ...insensitive };
    default:
      // Equality is no LIKE pattern: the text as it is.
      return { equals: text };
  }
}

/** The latest event the projections have reduced (they are updated in its transaction). */
export function projectionState(db: Database, cache: ProjectionCache): Promise<ProjectionState> {
  return cache.get("projection-state", async () => {
    const e = await db.reads.prisma.event.findFirst({ orderBy: { position: "desc" }, select: { position: true, createdAt: true } });
    return { position: e?.position ?? 0n, at: e?.createdAt };
  });
}

/** The projections' state a page was read at: the latest event reduced, and when it was committed. */
export interface ProjectionState {
  position: bigint;
  at: Date | undefined;
}

/** A page of a search: the rows, the window they fill, the total of the filter and the projections' state (the API makes ListDetails of it). */
export interface SearchPage<R> {
  rows: R[];
  skip: number;
  take: number;
  total: number;
  state: ProjectionState;
}

/**
 * One page of a search: the rows and the total of the same filter. Every search pages here. `fetch` gets the
 * window (offset, limit, direction) and returns a function that reads the page, given the total as it will be
 * known (it may wait for it to choose its plan), and one that counts. The total of a filter is kept until the
 * next committed event of one of `sources` (the aggregate types whose events write the tables counted):
 * counting a large table is the costly half of paging through it. `countKey` names the filter, e.g. the table
 * and its where clause.
 */
export async function searchPage<R>(
  db: Database,
  cache: ProjectionCache,
  window: ListWindow,
  countKey: string,
  sources: readonly string[],
  fetch: (w: ListWindow) => [(total: Promise<number>) => Promise<R[]>, () => Promise<number>],
): Promise<SearchPage<R>> {
  const [page, count] = fetch(window);
  const counted = cache.get(`count:${countKey}`, count, sources);
  const [rows, total, state] = await Promise.all([page(counted), counted, projectionState(db, cache)]);
  return { rows, skip: window.skip, take: window.take, total, state };
}

/** The name of a search's filter for the count cache: the table and its where clause. */
export const countKey = (table: string, where: unknown) => `${table}:${JSON.stringify(where)}`;

/** One criterion of a search: its kind (`case`) and what it asks for (`value`). */
export interface Criterion {
  case: string;
  value: unknown;
}

/** What a search asks for: all of the criteria, sorted by a field of the resource's (its default when absent). */
export interface SearchRequest<F extends Criterion, S extends string = never> {
  filters?: F[];
  sort?: S | undefined;
}

/** The where clause of each criterion. A case without an entry restricts nothing here (the IDPs' effective state is filtered after the policies). */
export type FilterMapping<F extends Criterion, W> = {
  [C in F["case"]]?: (value: Extract<F, { case: C }>["value"]) => W;
};

type Column<O> = keyof O & string;

/**
 * A searchable projection, declared once: how the criteria and the sorting field map to the table, and how its
 * rows are found and counted. `search` runs it. Every filter and sort column has an index that serves it
 * (prisma/schema.prisma), and a page reads only the columns a response shows (`select`), through the pool
 * (sql-search.ts).
 */
export interface Searchable<F extends Criterion, W, O, R, S extends string = never> {
  /** Names the table in the count cache. */
  table: string;
  /**
   * The aggregate types whose events' reducers write the table, cascades included (`tableSources` in
   * sources.ts): a cached total is dropped by their events only. A missing type would serve stale totals.
   */
  sources: readonly string[];
  filters: FilterMapping<F, W>;
  /** The column of each sorting field; a field without one (and none at all) sorts by `defaultSort`. */
  sortColumns?: Partial<Record<S, Column<O>>>;
  defaultSort: Column<O>;
  /**
   * Unique together within a search's scope: sorted after any other column, so that rows with equal values
   * keep one order from page to page.
   */
  tieBreaker: Column<O>[];
  /** Unique on their own: sorted by alone, so that an index on them serves the sort. Default: a one-column tie-breaker. */
  unique?: Column<O>[];
  /** The columns a response shows (Prisma's `select` form, which also types R); all of them when absent. */
  select?: Record<string, true>;
  /** The row type, carried for the compiler (the rows come from `select`). */
  readonly row?: R;
}

/** The where clause (the scope, e.g. the instance and what the caller may read, and the criteria) and the order of a search. */
export function searchPlan<F extends Criterion, W, O, R, S extends string>(s: Searchable<F, W, O, R, S>, scope: W[], req: SearchRequest<F, S>) {
  const filters = (req.filters ?? []).map((f) => {
    const where = Object.hasOwn(s.filters, f.case) ? (s.filters[f.case as F["case"]] as (value: unknown) => W) : undefined;
    return where ? where(f.value) : ({} as W);
  });
  const column = (req.sort === undefined ? undefined : s.sortColumns?.[req.sort]) ?? s.defaultSort;
  const unique = s.unique ?? (s.tieBreaker.length === 1 ? s.tieBreaker : []);
  const columns = unique.includes(column) ? [column] : [column, ...s.tieBreaker.filter((c) => c !== column)];
  return {
    where: { AND: [...scope, ...filters] } as W,
    /** The scope alone: what a bounded walk walks (`pagePlan`). */
    scopeWhere: { AND: scope } as W,
    orderBy: (order: Direction) => columns.map((c) => ({ [c]: order })) as O[],
  };
}

/** A page of a declared search within `scope`. */
export function search<F extends Criterion, W, O, R, S extends string>(
  db: Database,
  cache: ProjectionCache,
  s: Searchable<F, W, O, R, S>,
  scope: W[],
  req: SearchRequest<F, S>,
  window: ListWindow,
): Promise<SearchPage<R>> {
  const { where, scopeWhere, orderBy } = searchPlan(s, scope, req);
  return searchPage(db, cache, window, countKey(s.table, where), s.sources, ({ skip, take, order }) => [
    async (total) =>
      findRows(db, s, { where, orderBy: orderBy(order), skip, take, plan: await pagePlan(db, s.table, { where, scope: scopeWhere }, total, { skip, take }) }),
    () => countMatches(db, s, where),
  ]);
}

/** Rows of a declared search's table, its `select`ed columns, in Prisma's row form. */
export function findRows<F extends Criterion, W, O, R, S extends string>(
  db: Database,
  s: Searchable<F, W, O, R, S>,
  args: { where: W; orderBy: O[]; skip?: number; take?: number; plan?: PagePlan },
): Promise<R[]> {
  return findPage<R>(db, s.table, s.select, { ...args, orderBy: args.orderBy as Record<string, Direction>[] });
}

/** How many rows of a declared search's table match. */
export function countMatches<F extends Criterion, W, O, R, S extends string>(db: Database, s: Searchable<F, W, O, R, S>, where: W): Promise<number> {
  return countRows(db, s.table, where);
}

/** What a search may read: every organisation or some, and the projects the caller is a member of. */
export interface ReadScope {
  orgIds: "all" | string[];
  projectIds: string[];
}

/** The where clause of a ReadScope: rows of the readable organisations, and of the member projects where the table names a project. */
export function readableWhere<W>(scope: ReadScope, orgColumn: string, projectColumn?: string): W {
  if (scope.orgIds === "all") return {} as W;
  const inOrgs = { [orgColumn]: { in: scope.orgIds } };
  return (projectColumn ? { OR: [inOrgs, { [projectColumn]: { in: scope.projectIds } }] } : inOrgs) as W;
}
