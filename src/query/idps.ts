import type { Prisma as P } from "../../gen/prisma/client.js";
import type { Database } from "../storage/database.js";
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

export class IdpQueries {
  constructor(private readonly db: Database) {}

  byId(id: string) {
    return this.db.prisma.idp.findUnique({ where: { id } });
  }

  /** Where clause for what a search from `ctx` returns: its own, the inherited, and those of its children. */
  scope(ctx: ContextRef): P.IdpWhereInput {
    if (ctx.type === "system") return {};
    if (ctx.type === "instance") return { instanceId: { in: ["", ctx.id] } };
    return {
      OR: [{ ownerType: "system" }, { ownerType: "instance", ownerId: ctx.instanceId }, { ownerType: "org", ownerId: ctx.id }],
    };
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

  async search(where: P.IdpWhereInput, orderBy: P.IdpOrderByWithRelationInput[], skip: number, take: number) {
    const [rows, total] = await Promise.all([this.db.prisma.idp.findMany({ where, orderBy, skip, take }), this.db.prisma.idp.count({ where })]);
    return { rows, total };
  }

  all(where: P.IdpWhereInput, orderBy: P.IdpOrderByWithRelationInput[]) {
    return this.db.prisma.idp.findMany({ where, orderBy });
  }
}
