/**
 * The contexts everything is owned by and inherited along: system > instance > organisation. Every layer
 * speaks of them (authorization resolves a request's target, settings resolve along the chain, commands
 * write into one), so they live here, below all of them.
 */

export type ContextType = "system" | "instance" | "org";

export interface InstanceRow {
  id: string;
  name: string;
  defaultOrgId: string | null;
  /** One of its domains (mail links, new organisations' generated domains); null only before one was set. */
  primaryDomain: string | null;
  /** Limits: a blocked instance answers every request with RESOURCE_EXHAUSTED; the audit log's retention in seconds. */
  blocked: boolean;
  auditLogRetentionS: number | null;
}

export interface OrgRow {
  id: string;
  instanceId: string;
  name: string;
  primaryDomain: string;
}

/** The context a request acts in. A system request still arrived at an instance (its Host). */
export type Target =
  | { type: "system"; instance: InstanceRow }
  | { type: "instance"; instance: InstanceRow }
  | { type: "org"; instance: InstanceRow; org: OrgRow };

/** A context as the owner of settings, and as Details report it. */
export interface ContextOwner {
  type: ContextType;
  /** "" for the system. */
  id: string;
}

export const systemOwner: ContextOwner = { type: "system", id: "" };

export const sameOwner = (a: ContextOwner | undefined, b: ContextOwner) => !!a && a.type === b.type && a.id === b.id;

/** The owner (type, id) of a target context. */
export function ownerOf(target: Target): ContextOwner {
  switch (target.type) {
    case "system":
      return systemOwner;
    case "instance":
      return { type: "instance", id: target.instance.id };
    case "org":
      return { type: "org", id: target.org.id };
  }
}

/** The inheritance chain of a context: itself, then its parents up to the system. */
export function inheritanceChain(context: { type: ContextType; instanceId: string; orgId?: string }): ContextOwner[] {
  if (context.type === "system") return [systemOwner];
  const instance: ContextOwner = { type: "instance", id: context.instanceId };
  if (context.type === "instance") return [instance, systemOwner];
  return [{ type: "org", id: context.orgId ?? "" }, instance, systemOwner];
}

export function chainOfTarget(target: Target): ContextOwner[] {
  return inheritanceChain({ type: target.type, instanceId: target.instance.id, ...(target.type === "org" ? { orgId: target.org.id } : {}) });
}
