import type { Prisma as P } from "../../gen/prisma/client.js";
import { IDPFieldName, type IDPSearchFilter } from "../../gen/svc/resources/idp/v3alpha/idp_pb.js";
import { State, type ListDetails } from "../../gen/svc/resources/object/v3alpha/object_pb.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { countKey, search, searchPage, searchPlan, textFilter, type SearchRequest, type Searchable } from "./list.js";
import { effectiveActive, isAtOrAbove, parentOf, pathBelow, policyKey, sameContext, type ContextRef, type Policy } from "./reuse.js";

export type IdpRow = Awaited<ReturnType<Database["prisma"]["idp"]["findFirstOrThrow"]>>;

export const ownerOf = (r: IdpRow): ContextRef => ({
  type: r.ownerType as ContextRef["type"],
  id: r.ownerId,
  instanceId: r.ownerType === "org" ? r.instanceId : r.ownerType === "instance" ? r.ownerId : "",
});

/** A provider as one context sees it. */
export interface IdpView {
  row: IdpRow;
  owner: ContextRef;
  /** The context it is seen from: the asked context when the provider is visible there, else its owner. */
  seenFrom: ContextRef;
  active: boolean;
  /** The seeing context's own policy ("inherit" when it has none); the owner's policy in the owner. */
  policy: Policy;
  parent?: { context: ContextRef; active: boolean };
}

const idps: Searchable<IDPSearchFilter, P.IdpWhereInput, P.IdpOrderByWithRelationInput, IdpRow, IDPFieldName> = {
  table: "idp",
  // The state filter is not here: the effective state depends on the policies along the way (IdpQueries.search).
  filters: {
    id: (v) => ({ id: v.id }),
    name: (v) => ({ name: textFilter(v.name, v.method) }),
  },
  sortColumns: { [IDPFieldName.IDP_FIELD_NAME_NAME]: "name" },
  defaultSort: "createdAt",
  tieBreaker: ["id"],
  findMany: (db, args) => db.prisma.idp.findMany(args),
  count: (db, where) => db.prisma.idp.count({ where }),
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
    return this.db.prisma.idp.findUnique({ where: { id } });
  }

  /** The views of rows from `ctx`, with the policies they need loaded in one query. */
  async views(rows: IdpRow[], ctx: ContextRef): Promise<IdpView[]> {
    const contexts = new Map<string, ContextRef>();
    for (const r of rows) {
      const owner = ownerOf(r);
      if (!isAtOrAbove(owner, ctx)) continue;
      for (const c of pathBelow(owner, ctx)) contexts.set(policyKey(c), c);
    }
    const policyRows = contexts.size
      ? await this.db.prisma.idpPolicy.findMany({
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
      const view: IdpView = { row, owner, seenFrom, active, policy };
      const up = sameContext(seenFrom, owner) ? undefined : parentOf(seenFrom);
      if (up) view.parent = { context: up, active: effectiveActive(ownerPolicy, owner, policies, up) };
      return view;
    });
  }

  /**
   * The providers a search from `from` returns, as `from` sees them. `cache` keeps totals until the next
   * committed event (app.ts builds IdpQueries from the database alone).
   */
  async search(
    cache: ProjectionCache,
    from: ContextRef,
    req: SearchRequest<IDPSearchFilter, IDPFieldName>,
  ): Promise<{ views: IdpView[]; details: ListDetails }> {
    const scope = [scopeOf(from)];
    const states = (req.filters ?? []).flatMap((f) => (f.filter.case === "state" ? [f.filter.value.state] : []));
    if (!states.length) {
      const { rows, details } = await search(this.db, cache, idps, scope, req);
      return { views: await this.views(rows, from), details };
    }
    // The effective state depends on the policies along the way: every match is read, filtered after they are
    // applied, and paged here.
    const { where, orderBy } = searchPlan(idps, scope, req);
    const { rows, details } = await searchPage(this.db, cache, req.query, countKey("idp-state", { where, from, states }), ({ skip, take, order }) => {
      const matching = idps
        .findMany(this.db, { where, orderBy: orderBy(order) })
        .then((all) => this.views(all, from))
        .then((views) => views.filter((v) => states.every((s) => (v.active ? State.EFFECTIVE_STATE_ACTIVE : State.EFFECTIVE_STATE_INACTIVE) === s)));
      return [matching.then((m) => m.slice(skip, skip + take)), () => matching.then((m) => m.length)];
    });
    return { views: rows, details };
  }
}
