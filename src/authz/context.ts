import { createContextKey, type HandlerContext } from "@connectrpc/connect";
import { errors } from "../errors/errors.js";
import type { InstanceRow, Target } from "../domain/contexts.js";
import type { Client } from "../domain/forwarded.js";
import type { MembershipRow } from "../query/tenancy.js";

// The contexts are domain types; named here too for the modules that take them from authorization.
export { ownerOf, type Target } from "../domain/contexts.js";

/** Who calls. Token verifiers produce it; the authorization interceptor checks it. */
export interface Caller {
  userId: string;
  /** The instance and organisation the caller's user belongs to. */
  instanceId: string;
  orgId: string;
  memberships: MembershipRow[];
}

export interface CallInfo {
  /** The instance the Host (or :authority) header names. */
  hostInstance: InstanceRow;
  target: Target;
  caller: Caller;
  /** The RPC's declared permission. */
  permission: string;
  /** Permissions the caller holds in the target context. */
  permissions: ReadonlySet<string>;
  /** The RPC's declared permission, checked in `target` (PERMISSION_DENIED); for resource_context methods. */
  authorize(target: Target, permission?: string): void;
  /**
   * Where in the target's instance the caller holds `permission`: everywhere ("all", through the instance or
   * the system), or only in these organisations. Searches return only what this allows.
   */
  scopeOf(permission: string): "all" | string[];
  /** The projects in which the caller holds `permission` through a project membership. */
  projectsWith(permission: string): string[];
  /** The project grants the caller is a member of with `permission` (their IDs). */
  grantsWith(permission: string): string[];
  /**
   * The first membership of a user whose permissions the caller does not hold where it applies (the privilege
   * ceiling, src/authz/permissions.ts); undefined when the caller may change that user's credentials and state.
   */
  uncovered(userId: string): Promise<MembershipRow | undefined>;
  /** The permissions these roles give, sorted. */
  permissionsOfRoles(roles: readonly string[]): string[];
}

export const callInfoKey = createContextKey<CallInfo | undefined>(undefined, { description: "svc call info" });
export const hostInstanceKey = createContextKey<InstanceRow | undefined>(undefined, { description: "svc host instance" });
export const callerKey = createContextKey<Caller | undefined>(undefined, { description: "svc caller" });
/** Who a call comes from (src/web/client.ts: behind trusted proxies what they forwarded); set by the transport. */
export const clientKey = createContextKey<Client | undefined>(undefined, { description: "svc client" });

/**
 * Who the call comes from and which host it addressed (behind trusted proxies, what they forwarded): the
 * transport puts it in every call's context; a call made without it (in process) has the headers it has.
 */
export function clientOf(ctx: HandlerContext): Client {
  const known = ctx.values.get(clientKey);
  if (known) return known;
  const host = ctx.requestHeader.get("host") ?? ctx.requestHeader.get(":authority") ?? "";
  return { address: "", secure: false, host };
}

/** The call info that the authorization interceptor put in place; handlers of non-public RPCs always have it. */
export function callInfo(ctx: HandlerContext): CallInfo {
  const info = ctx.values.get(callInfoKey);
  if (!info) throw errors.internal("AUTHZ-n0ci", "the call has no authorization context");
  return info;
}
