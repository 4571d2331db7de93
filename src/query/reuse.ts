import type { Policy } from "../domain/idps.js";
/**
 * Reusable resources across system > instance > org: who sees a resource, and its effective state in a
 * context. Pure functions over the owner, the owner's policy and the children's policies.
 */
import type { ContextType } from "../domain/contexts.js";

export type Level = ContextType;

export interface ContextRef {
  type: Level;
  /** "" for the system. */
  id: string;
  /** The instance an org belongs to (the instance itself for an instance; "" for the system). */
  instanceId: string;
}

export type { Policy };

const depth: Record<Level, number> = { system: 0, instance: 1, org: 2 };

export function sameContext(a: ContextRef, b: ContextRef): boolean {
  return a.type === b.type && a.id === b.id;
}

/** Whether `ancestor` is `ctx` or above it (system above every instance, an instance above its orgs). */
export function isAtOrAbove(ancestor: ContextRef, ctx: ContextRef): boolean {
  if (depth[ancestor.type] > depth[ctx.type]) return false;
  if (ancestor.type === "system") return true;
  if (ancestor.type === "instance") return ctx.instanceId === ancestor.id;
  return sameContext(ancestor, ctx);
}

/** The contexts from just below `owner` down to `ctx`, top first (empty when ctx is the owner). */
export function pathBelow(owner: ContextRef, ctx: ContextRef): ContextRef[] {
  const path: ContextRef[] = [];
  if (depth[owner.type] < 1 && depth[ctx.type] >= 1) path.push({ type: "instance", id: ctx.instanceId, instanceId: ctx.instanceId });
  if (depth[owner.type] < 2 && ctx.type === "org") path.push(ctx);
  return path;
}

/** The context right above `ctx`. */
export function parentOf(ctx: ContextRef): ContextRef | undefined {
  if (ctx.type === "org") return { type: "instance", id: ctx.instanceId, instanceId: ctx.instanceId };
  if (ctx.type === "instance") return { type: "system", id: "", instanceId: "" };
  return undefined;
}

export const policyKey = (c: { type: string; id: string }) => `${c.type}/${c.id}`;

/**
 * The effective state in `ctx`: the owner's policy decides in the owner's context; each context below
 * follows its own policy, and inherit (the default) takes the state of the context above.
 */
export function effectiveActive(ownerPolicy: Policy, owner: ContextRef, policies: ReadonlyMap<string, Policy>, ctx: ContextRef): boolean {
  let active = ownerPolicy !== "deactivate";
  for (const c of pathBelow(owner, ctx)) {
    const p = policies.get(policyKey(c)) ?? "inherit";
    if (p !== "inherit") active = p === "activate";
  }
  return active;
}
