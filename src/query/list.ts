import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ListDetailsSchema, TextFilterMethod, type ListDetails, type ListQuery } from "../../gen/svc/resources/object/v3alpha/object_pb.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { countRows, findPage, readThroughFilter } from "./sql-search.js";

export const DEFAULT_LIMIT = 100;

export type Direction = "asc" | "desc";

export interface ListWindow {
  skip: number;
  take: number;
  order: Direction;
}

/** ListQuery as the specification has it: limit 100 by default (the validator refuses above 1000), descending by default. */
export function listWindow(q: ListQuery | undefined): ListWindow {
  return { skip: Number(q?.offset ?? 0n), take: q?.limit || DEFAULT_LIMIT, order: q?.asc ? "asc" : "desc" };
}

/**
 * `value` as a literal in a LIKE pattern. Prisma puts the filters below into LIKE / ILIKE patterns as they
 * are, so `_` and `%` in a searched name would match any character.
 */
const likeLiteral = (value: string) => value.replace(/[\\%_]/g, "\\$&");

/** A Prisma string filter for a TextFilterMethod (the indexes that serve each: docs/decisions.md, "Searches flat in the data size"). */
export function textFilter(value: string, method: TextFilterMethod) {
  const insensitive = { mode: "insensitive" as const };
  const pattern = likeLiteral(value);
  switch (method) {
    case TextFilterMethod.EQUALS_IGNORE_CASE:
      return { equals: pattern, ...insensitive };
    case TextFilterMethod.STARTS_WITH:
      return { startsWith: pattern };
    case TextFilterMethod.STARTS_WITH_IGNORE_CASE:
      return { startsWith: pattern, ...insensitive };
    case TextFilterMethod.CONTAINS:
      return { contains: pattern };
    case TextFilterMethod.CONTAINS_IGNORE_CASE:
      return { contains: pattern, ...insensitive };
    case TextFilterMethod.ENDS_WITH:
      return { endsWith: pattern };
    case TextFilterMethod.ENDS_WITH_IGNORE_CASE:
      return { endsWith: pattern, ...insensitive };
    default:
      return { equals: value };
  }
}

/** The latest event the projections have reduced (they are updated in its transaction). */
export function projectionState(db: Database, cache: ProjectionCache): Promise<{ position: bigint; at: Date | undefined }> {
  return cache.get("projection-state", async () => {
    const e = await db.prisma.event.findFirst({ orderBy: { position: "desc" }, select: { position: true, createdAt: true } });
    return { position: e?.position ?? 0n, at: e?.createdAt };
  });
}

export function listDetails(args: {
  take: number;
  skip: number;
  returned: number;
  total: number;
  state: { position: bigint; at: Date | undefined };
}): ListDetails {
  return create(ListDetailsSchema, {
    appliedLimit: args.take,
    endOfList: args.skip + args.returned >= args.total,
    totalResult: BigInt(args.total),
    processedSequence: args.state.position,
    ...(args.state.at ? { timestamp: timestampFromDate(args.state.at) } : {}),
  });
}

/**
 * One page of a search: the rows and the total of the same filter, and ListDetails that say so truthfully.
 * Every search pages here. `fetch` gets the window (offset, limit, direction) and returns a function that reads
 * the page, given the total as it will be known (it may wait for it to choose its plan), and one that counts.
 * The total of a filter is kept until the next committed event of one of `sources` (the aggregate types whose
 * events write the tables counted): counting a large table is the costly half of paging through it. `countKey`
 * names the filter, e.g. the table and its where clause.
 */
export async function searchPage<R>(
  db: Database,
  cache: ProjectionCache,
  query: ListQuery | undefined,
  countKey: string,
  sources: readonly string[],
  fetch: (w: ListWindow) => [(total: Promise<number>) => Promise<R[]>, () => Promise<number>],
): Promise<{ rows: R[]; details: ListDetails }> {
  const window = listWindow(query);
  const [page, count] = fetch(window);
  const counted = cache.get(`count:${countKey}`, count, sources);
  const [rows, total, state] = await Promise.all([page(counted), counted, projectionState(db, cache)]);
  return { rows, details: listDetails({ take: window.take, skip: window.skip, returned: rows.length, total, state }) };
}

/** The name of a search's filter for the count cache: the table and its where clause. */
export const countKey = (table: string, where: unknown) => `${table}:${JSON.stringify(where)}`;

/** What a search asks for, as the proto search requests carry it. */
export interface SearchRequest<F, N extends number> {
  filters?: F[];
  sortingColumn?: N;
  query?: ListQuery | undefined;
}

/** A proto search filter: its criterion is the oneof `filter`. */
export interface ProtoFilter {
  filter: { case: string | undefined; value?: unknown };
}

/**
 * The where clause of each filter case; `field` is the filter's path in the request (`filters[2]`) for errors.
 * A case without an entry restricts nothing here (the IDPs' effective state is filtered after the policies).
 */
export type FilterMapping<F extends ProtoFilter, W> = {
  [C in NonNullable<F["filter"]["case"]>]?: (value: Extract<F["filter"], { case: C }>["value"], field: string) => W;
};

type Column<O> = keyof O & string;

/**
 * A searchable projection, declared once: how the request's filters and sorting field map to the table, and
 * how its rows are found and counted. `search` runs it. Every filter and sort column has an index that serves
 * it (prisma/schema.prisma), and a page reads only the columns a response shows (`select`), through the pool
 * (sql-search.ts).
 */
export interface Searchable<F extends ProtoFilter, W, O, R, N extends number = number> {
  /** Names the table in the count cache. */
  table: string;
  /**
   * The aggregate types whose events' reducers write the table, cascades included (`tableSources` in
   * sources.ts): a cached total is dropped by their events only. A missing type would serve stale totals.
   */
  sources: readonly string[];
  filters: FilterMapping<F, W>;
  /** The column of each sorting field; a field without one (and none at all) sorts by `defaultSort`. */
  sortColumns?: Partial<Record<N, Column<O>>>;
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

/** The where clause (the scope, e.g. the instance and what the caller may read, and the filters) and the order of a search. */
export function searchPlan<F extends ProtoFilter, W, O, R, N extends number>(s: Searchable<F, W, O, R, N>, scope: W[], req: SearchRequest<F, N>) {
  const filters = (req.filters ?? []).map((f, i) => {
    const c = f.filter.case;
    const where = c && Object.hasOwn(s.filters, c) ? (s.filters[c as keyof FilterMapping<F, W>] as (value: unknown, field: string) => W) : undefined;
    return where ? where(f.filter.value, `filters[${i}]`) : ({} as W);
  });
  const column = (req.sortingColumn === undefined ? undefined : s.sortColumns?.[req.sortingColumn]) ?? s.defaultSort;
  const unique = s.unique ?? (s.tieBreaker.length === 1 ? s.tieBreaker : []);
  const columns = unique.includes(column) ? [column] : [column, ...s.tieBreaker.filter((c) => c !== column)];
  return {
    where: { AND: [...scope, ...filters] } as W,
    orderBy: (order: Direction) => columns.map((c) => ({ [c]: order })) as O[],
  };
}

/** A page of a declared search within `scope`. */
export function search<F extends ProtoFilter, W, O, R, N extends number>(
  db: Database,
  cache: ProjectionCache,
  s: Searchable<F, W, O, R, N>,
  scope: W[],
  req: SearchRequest<F, N>,
): Promise<{ rows: R[]; details: ListDetails }> {
  const { where, orderBy } = searchPlan(s, scope, req);
  return searchPage(db, cache, req.query, countKey(s.table, where), s.sources, ({ skip, take, order }) => [
    async (total) =>
      findRows(db, s, { where, orderBy: orderBy(order), skip, take, throughFilter: await readThroughFilter(db, s.table, where, total, { skip, take }) }),
    () => countMatches(db, s, where),
  ]);
}

/** Rows of a declared search's table, its `select`ed columns, in Prisma's row form. */
export function findRows<F extends ProtoFilter, W, O, R, N extends number>(
  db: Database,
  s: Searchable<F, W, O, R, N>,
  args: { where: W; orderBy: O[]; skip?: number; take?: number; throughFilter?: boolean },
): Promise<R[]> {
  return findPage<R>(db, s.table, s.select, { ...args, orderBy: args.orderBy as Record<string, Direction>[] });
}

/** How many rows of a declared search's table match. */
export function countMatches<F extends ProtoFilter, W, O, R, N extends number>(db: Database, s: Searchable<F, W, O, R, N>, where: W): Promise<number> {
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

/** A page of a search in domain terms: the rows, the window they fill, the total of the filter and the projections' state. */
export interface SearchPage<R> {
  rows: R[];
  skip: number;
  take: number;
  total: number;
  state: { position: bigint; at: Date | undefined };
}

/**
 * `search` for queries that take no API message: the window comes read already (`listWindow` in the API layer),
 * and the page goes back as plain values (the API makes ListDetails of it with `listDetails`). The same plan,
 * count cache and reading through the filter as `search`.
 */
export async function searchWindow<F extends ProtoFilter, W, O, R, N extends number>(
  db: Database,
  cache: ProjectionCache,
  s: Searchable<F, W, O, R, N>,
  scope: W[],
  req: Omit<SearchRequest<F, N>, "query">,
  window: ListWindow,
): Promise<SearchPage<R>> {
  const { where, orderBy } = searchPlan(s, scope, req);
  const { skip, take, order } = window;
  const counted = cache.get(`count:${countKey(s.table, where)}`, () => countMatches(db, s, where), s.sources);
  const page = async () =>
    findRows(db, s, { where, orderBy: orderBy(order), skip, take, throughFilter: await readThroughFilter(db, s.table, where, counted, { skip, take }) });
  const [rows, total, state] = await Promise.all([page(), counted, projectionState(db, cache)]);
  return { rows, skip, take, total, state };
}

/** A Prisma filter for text containing `value` literally (`%` and `_` as themselves), for queries that take plain text. */
export function containsLiteral(value: string) {
  return { contains: likeLiteral(value) };
}
