import type { Target } from "../domain/contexts.js";
import type { MembershipRow, TenancyQueries } from "../query/tenancy.js";
import type { Caller } from "./context.js";

/** A context where permissions are held, by its IDs only (a membership names its context this way). */
export type ContextRef = { type: "system" } | { type: "instance"; instanceId: string } | { type: "org"; instanceId: string; orgId: string };

export function contextOf(target: Target): ContextRef {
  if (target.type === "system") return { type: "system" };
  if (target.type === "instance") return { type: "instance", instanceId: target.instance.id };
  return { type: "org", instanceId: target.instance.id, orgId: target.org.id };
}

const permissionsOfRoles = (roles: readonly string[], rolePermissions: Record<string, string[]>) => roles.flatMap((r) => rolePermissions[r] ?? []);

/**
 * Permission sets already made, by memberships list (the membership cache hands every request of a user the same
 * list until a membership of theirs changes, and then a new one), role table and context. An administrator's
 * roles give several hundred permissions: building the set on every call was a tenth of a one-row search's CPU.
 */
const known = new WeakMap<readonly unknown[], WeakMap<Record<string, string[]>, Map<string, ReadonlySet<string>>>>();

const CONTEXTS_KEPT = 256;

const keyOf = (at: ContextRef) => (at.type === "system" ? "system" : at.type === "instance" ? `i:${at.instanceId}` : `o:${at.instanceId}:${at.orgId}`);

/**
 * The permissions a caller holds in a context through its memberships' roles: a system membership applies
 * everywhere, an instance membership to the instance and its organisations, an organisation membership there.
 */
export function permissionsAt(caller: Pick<Caller, "memberships">, at: ContextRef, rolePermissions: Record<string, string[]>): ReadonlySet<string> {
  let byRoles = known.get(caller.memberships);
  if (!byRoles) {
    byRoles = new WeakMap();
    known.set(caller.memberships, byRoles);
  }
  let byContext = byRoles.get(rolePermissions);
  if (!byContext) {
    byContext = new Map();
    byRoles.set(rolePermissions, byContext);
  }
  const key = keyOf(at);
  const kept = byContext.get(key);
  if (kept) return kept;
  // A system member acting in thousands of organisations would keep a set for each: a few hundred at most.
  if (byContext.size >= CONTEXTS_KEPT) byContext.clear();
  const held = heldAt(caller.memberships, at, rolePermissions);
  byContext.set(key, held);
  return held;
}

function heldAt(memberships: Caller["memberships"], at: ContextRef, rolePermissions: Record<string, string[]>): ReadonlySet<string> {
  const out = new Set<string>();
  for (const m of memberships) {
    const applies =
      m.contextType === "system" ||
      (at.type !== "system" && m.contextType === "instance" && m.contextId === at.instanceId) ||
      (at.type === "org" && m.contextType === "org" && m.contextId === at.orgId);
    if (applies) for (const p of permissionsOfRoles(m.roles, rolePermissions)) out.add(p);
  }
  return out;
}

/**
 * The privilege ceiling (security review, finding 1): a caller may change a user's credentials, state or factors
 * only if it holds, in every context where that user is a member, every permission the user's roles give there.
 * Otherwise whoever manages an organisation's users (ORG_USER_MANAGER) would take over the administrators who
 * live in it, up to the system's owners: a new PAT or password of theirs is their power. System memberships are
 * therefore covered only by system memberships. Impersonation, which is acting as the user, obeys the same rule.
 * Returns the first membership the caller does not cover (undefined: it covers them all, or acts on itself).
 */
export async function uncoveredMembership(
  caller: Pick<Caller, "userId" | "memberships">,
  subject: { id: string; memberships: readonly MembershipRow[] },
  rolePermissions: Record<string, string[]>,
  tenancy: Pick<TenancyQueries, "orgOfContext">,
): Promise<MembershipRow | undefined> {
  if (caller.userId === subject.id) return undefined;
  for (const m of subject.memberships) {
    const needed = permissionsOfRoles(m.roles, rolePermissions);
    if (needed.length === 0) continue;
    const held = await heldFor(caller, m, rolePermissions, tenancy);
    if (needed.some((p) => !held.has(p))) return m;
  }
  return undefined;
}

/**
 * What the caller holds where a membership applies. A project or project grant is covered from the project's
 * organisation (and what is above it), or by the caller's own membership in the same project or grant.
 */
async function heldFor(
  caller: Pick<Caller, "memberships">,
  m: MembershipRow,
  rolePermissions: Record<string, string[]>,
  tenancy: Pick<TenancyQueries, "orgOfContext">,
): Promise<ReadonlySet<string>> {
  if (m.contextType === "system") return permissionsAt(caller, { type: "system" }, rolePermissions);
  if (m.contextType === "instance") return permissionsAt(caller, { type: "instance", instanceId: m.contextId }, rolePermissions);
  if (m.contextType === "org") return permissionsAt(caller, { type: "org", instanceId: m.instanceId, orgId: m.contextId }, rolePermissions);
  const orgId = await tenancy.orgOfContext(m.contextType, m.contextId);
  const held = new Set(orgId ? permissionsAt(caller, { type: "org", instanceId: m.instanceId, orgId }, rolePermissions) : []);
  for (const own of caller.memberships) {
    if (own.contextType === m.contextType && own.contextId === m.contextId) for (const p of permissionsOfRoles(own.roles, rolePermissions)) held.add(p);
  }
  return held;
}

/** How a membership is named in an error: "SYSTEM_OWNER in the system", "ORG_OWNER in organization 123". */
export function describeMembership(m: MembershipRow): string {
  const where = m.contextType === "system" ? "the system" : `${m.contextType.replace("_", " ")} ${m.contextId}`.replace(/^org /, "organization ");
  return `${m.roles.join(", ")} in ${where}`;
}
