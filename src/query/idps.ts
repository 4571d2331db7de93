import type { Prisma as P } from "../../gen/prisma/client.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import {
  countKey,
  countMatches,
  findRows,
  search,
  searchPage,
  searchPlan,
  textFilter,
  type ListWindow,
  type SearchPage,
  type SearchRequest,
  type Searchable,
  type TextCriterion,
} from "./list.js";
import { tableSources } from "./sources.js";
import { effectiveActive, isAtOrAbove, parentOf, pathBelow, policyKey, sameContext, type ContextRef, type Policy } from "./reuse.js";

export type IdpRow = Awaited<ReturnType<Database["prisma"]["idp"]["findFirstOrThrow"]>>;

/** The columns of a provider's answer in a search (`toGetIdp`): not its client ID, scopes or secret. */
const idpColumns = {
  id: true,
  instanceId: true,
  ownerType: true,
  ownerId: true,
  name: true,
  type: true,
  ownerPolicy: true,
  options: true,
  sequence: true,
  changeDate: true,
} satisfies P.IdpSelect;
export type IdpListRow = P.IdpGetPayload<{ select: typeof idpColumns }>;

export const ownerOf = (r: Pick<IdpRow, "ownerType" | "ownerId" | "instanceId">): ContextRef => ({
  type: r.ownerType as ContextRef["type"],
  id: r.ownerId,
  instanceId: r.ownerType === "org" ? r.instanceId : r.ownerType === "instance" ? r.ownerId : "",
});

/** A provider as one context sees it: the whole row, or (searches) the columns of `IdpListRow`. */
export interface IdpView<R extends IdpListRow = IdpRow> {
  row: R;
  owner: ContextRef;
  /** The context it is seen from: the asked context when the provider is visible there, else its owner. */
  seenFrom: ContextRef;
  active: boolean;
  /** The seeing context's own policy ("inherit" when it has none); the owner's policy in the owner. */
  policy: Policy;
  parent?: { context: ContextRef; active: boolean };
}

/** What a provider search filters by; `state` is the effective state as the searching context sees it (undefined: none matches). */
export type IdpFilter = { case: "id"; value: string } | { case: "name"; value: TextCriterion } | { case: "state"; value: "active" | "inactive" | undefined };

export type IdpSort = "name";

const idps: Searchable<IdpFilter, P.IdpWhereInput, P.IdpOrderByWithRelationInput, IdpListRow, IdpSort> = {
  table: "idp",
  sources: tableSources.idp,
  // The state filter is not here: the effective state depends on the policies along the way (IdpQueries.search).
  filters: {
    id: (id) => ({ id }),
    name: (v) => ({ name: textFilter(v) }),
  },
  sortColumns: { name: "name" },
  defaultSort: "createdAt",
  tieBreaker: ["id"],
  select: idpColumns,
};

/** Where clause for what a search from `ctx` returns: its own, the inherited, and those of its children. */
function scopeOf(ctx: ContextRef): P.IdpWhereInput {
  if (ctx.type === "system") return {};
  if (ctx.type === "instance") return { instanceId: { in: ["", ctx.id] } };
  return {
    OR: [{ ownerType: "system" }, { ownerType: "instance", ownerId: ctx.instanceId }, { ownerType: "org", ownerId: ctx.id }],
  };
}

export class IdpQueries {
  constructor(private readonly db: Database) {}

  byId(id: string) {
    return this.db.reads.prisma.idp.findUnique({ where: { id } });
  }

  /**
   * The providers a sign-in in `ctx` may use, by name: those of the context and above it (never a child's) that
   * are active there, state policies along the way applied.
   */
  async activeIn(ctx: ContextRef): Promise<IdpRow[]> {
    const rows = await this.db.reads.prisma.idp.findMany({ where: scopeOf(ctx), orderBy: [{ name: "asc" }, { id: "asc" }] });
    const views = await this.views(
      rows.filter((r) => isAtOrAbove(ownerOf(r), ctx)),
      ctx,
    );
    return views.filter((v) => v.active).map((v) => v.row);
  }

  /**
   * The provider of an intent of the intents API (a custom login UI's sign-in, whose organisation is not known
   * yet): of the instance or the system, and active in the instance, or in the organisation that owns it.
   */
  async usableForIntent(instanceId: string, idpId: string): Promise<IdpRow | undefined> {
    const row = await this.byId(idpId);
    if (!row || (row.instanceId !== "" && row.instanceId !== instanceId)) return undefined;
    const owner = ownerOf(row);
    const ctx: ContextRef = owner.type === "org" ? owner : { type: "instance", id: instanceId, instanceId };
    return (await this.activeIn(ctx)).find((r) => r.id === row.id);
  }

  /** The views of rows from `ctx`, with the policies they need loaded in one query. */
  async views<R extends IdpListRow>(rows: R[], ctx: ContextRef): Promise<IdpView<R>[]> {
    const contexts = new Map<string, ContextRef>();
    for (const r of rows) {
      const owner = ownerOf(r);
      if (!isAtOrAbove(owner, ctx)) continue;
      for (const c of pathBelow(owner, ctx)) contexts.set(policyKey(c), c);
    }
    const policyRows = contexts.size
      ? await this.db.reads.prisma.idpPolicy.findMany({
          where: { idpId: { in: rows.map((r) => r.id) }, OR: [...contexts.values()].map((c) => ({ contextType: c.type, contextId: c.id })) },
        })
      : [];
    const byIdp = new Map<string, Map<string, Policy>>();
    for (const p of policyRows) {
      const m = byIdp.get(p.idpId) ?? new Map<string, Policy>();
      m.set(policyKey({ type: p.contextType, id: p.contextId }), p.policy as Policy);
      byIdp.set(p.idpId, m);
    }
    return rows.map((row) => {
      const owner = ownerOf(row);
      const policies = byIdp.get(row.id) ?? new Map<string, Policy>();
      const visible = isAtOrAbove(owner, ctx);
      const seenFrom = visible ? ctx : owner;
      const ownerPolicy = row.ownerPolicy as Policy;
      const active = effectiveActive(ownerPolicy, owner, policies, seenFrom);
      const policy = sameContext(seenFrom, owner) ? ownerPolicy : (policies.get(policyKey(seenFrom)) ?? "inherit");
      const view: IdpView<R> = { row, owner, seenFrom, active, policy };
      const up = sameContext(seenFrom, owner) ? undefined : parentOf(seenFrom);
      if (up) view.parent = { context: up, active: effectiveActive(ownerPolicy, owner, policies, up) };
      return view;
    });
  }

  /**
   * The providers a search from `from` returns, as `from` sees them. `cache` keeps totals until the next
   * committed event (app.ts builds IdpQueries from the database alone).
   */
  async search(cache: ProjectionCache, from: ContextRef, req: SearchRequest<IdpFilter, IdpSort>, window: ListWindow): Promise<SearchPage<IdpView<IdpListRow>>> {
    const scope = [scopeOf(from)];
    const states = (req.filters ?? []).flatMap((f) => (f.case === "state" ? [f.value] : []));
    if (!states.length) {
      const page =
        from.type === "instance" ? await this.searchFromInstance(cache, from.id, req, window) : await search(this.db, cache, idps, scope, req, window);
      return { ...page, rows: await this.views(page.rows, from) };
    }
    // The effective state depends on the policies along the way: every match is read, filtered after they are
    // applied, and paged here.
    const { where, orderBy } = searchPlan(idps, scope, req);
    return searchPage(this.db, cache, window, countKey("idp-state", { where, from, states }), idps.sources, ({ skip, take, order }) => {
      const matching = findRows(this.db, idps, { where, orderBy: orderBy(order) })
        .then((all) => this.views(all, from))
        .then((views) => views.filter((v) => states.every((s) => (v.active ? "active" : "inactive") === s)));
      return [() => matching.then((m) => m.slice(skip, skip + take)), () => matching.then((m) => m.length)];
    });
  }

  /**
   * A search from an instance: the system's providers (instance "") and the instance's own, its
   * organisations' included. Each is one range of the (instance, order column, id) indexes, but PostgreSQL
   * cannot read two ranges of one index in one order (it would sort every provider of the instance), so each
   * range is read up to the end of the page and the two are merged here.
   */
  private searchFromInstance(cache: ProjectionCache, instanceId: string, req: SearchRequest<IdpFilter, IdpSort>, window: ListWindow) {
    const { where, orderBy } = searchPlan(idps, [], req);
    const within = (id: string): P.IdpWhereInput => ({ AND: [{ instanceId: id }, where] });
    const all: P.IdpWhereInput = { AND: [{ instanceId: { in: ["", instanceId] } }, where] };
    return searchPage(this.db, cache, window, countKey(idps.table, all), idps.sources, ({ skip, take, order }) => {
      const by = orderBy(order);
      const range = (id: string) => findRows(this.db, idps, { where: within(id), orderBy: by, take: skip + take });
      const rows = Promise.all([range(""), range(instanceId)]).then(([system, own]) => mergeOrdered(system, own, by).slice(skip, skip + take));
      return [() => rows, () => countMatches(this.db, idps, all)];
    });
  }
}

/** Two lists sorted by `orderBy` (Prisma's form: one `{ column: direction }` per key) as one sorted list. */
function mergeOrdered<R>(a: R[], b: R[], orderBy: P.IdpOrderByWithRelationInput[]): R[] {
  const keys = orderBy.flatMap((o) => Object.entries(o) as [keyof R & string, "asc" | "desc"][]);
  const compare = (x: R, y: R) => {
    for (const [column, direction] of keys) {
      const c = compareValues(x[column], y[column]);
      if (c) return direction === "asc" ? c : -c;
    }
    return 0;
  };
  const out: R[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push(compare(a[i]!, b[j]!) <= 0 ? a[i++]! : b[j++]!);
  return out.concat(a.slice(i), b.slice(j));
}

/** Compares column values as PostgreSQL orders them under the C.UTF-8 collation (text by code point). */
function compareValues(x: unknown, y: unknown): number {
  if (x instanceof Date && y instanceof Date) return x.getTime() - y.getTime();
  if (typeof x === "string" && typeof y === "string") return compareCodePoints(x, y);
  return x === y ? 0 : (x as number) < (y as number) ? -1 : 1;
}

/** Code point order of UTF-16 strings: surrogates (code points above U+FFFF) sort after U+E000-U+FFFF. */
function compareCodePoints(x: string, y: string): number {
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const a = x.charCodeAt(i);
    const b = y.charCodeAt(i);
    if (a !== b) return fixup(a) - fixup(b);
  }
  return x.length - y.length;
}

const fixup = (unit: number) => (unit >= 0xe000 ? unit - 0x800 : unit >= 0xd800 ? unit + 0x2000 : unit);
