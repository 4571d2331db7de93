import type { Interceptor } from "@connectrpc/connect";
import type { RequestContext } from "../../gen/svc/object/v3alpha/object_pb.js";
import type { FailureLimiter } from "../command/failure-limits.js";
import { addressKey } from "../domain/client-address.js";
import type { RateRule } from "../domain/rate-rules.js";
import { errors } from "../errors/errors.js";
import { isFeatureName, type FeatureQueries } from "../query/features.js";
import type { InstanceRow, TenancyQueries } from "../query/tenancy.js";
import { methodInfo, permissionIn } from "../schema/descriptors.js";
import { refuseBlockedInstance } from "./blocked.js";
import { contextOf, permissionsAt, uncoveredMembership } from "./permissions.js";
import { callerKey, callInfoKey, clientKey, hostInstanceKey, type Caller, type Target } from "./context.js";
import type { TokenVerifiers } from "./verifier.js";

export interface AuthDeps {
  tenancy: TenancyQueries;
  verifiers: TokenVerifiers;
  features: FeatureQueries;
  rolePermissions: Record<string, string[]>;
  /** SVC_RATE_LIMIT_TOKEN_FAILURES_ADDRESS: bearer tokens never issued here, per client address. */
  failures?: { limiter: FailureLimiter; address: RateRule } | undefined;
}

/** The host name of a Host or :authority value, without port, lower case ("[::1]:8080" -> "::1"). */
export function hostnameOf(host: string | null): string {
  if (!host) return "";
  const h = host.trim().toLowerCase();
  if (h.startsWith("[")) return h.slice(1, h.indexOf("]"));
  const colon = h.lastIndexOf(":");
  return colon >= 0 && h.indexOf(":") === colon ? h.slice(0, colon) : h;
}

/**
 * Who calls, at which instance: the instance the Host (or :authority) names (unknown host: NOT_FOUND) and the
 * bearer token's caller (none or bad: UNAUTHENTICATED), bound to that instance unless a system member. The one
 * authentication of the API: the interceptor below for the RPCs, the older JSON-only routes directly. Tokens
 * never issued here count per client address (`address`: its key), and over that limit are not looked at.
 */
export async function authenticateCall(
  deps: AuthDeps,
  call: { host: string | null | undefined; authorization: string | null | undefined; address: string | undefined },
): Promise<{ instance: InstanceRow; caller: Caller }> {
  const hostname = hostnameOf(call.host ?? null);
  const instance = await deps.tenancy.instanceByDomain(hostname);
  if (!instance) throw errors.notFound("TENANT-h0st", `no instance is served at the host "${hostname}"`);
  const m = /^Bearer\s+(\S+)$/i.exec(call.authorization ?? "");
  if (!m) throw errors.unauthenticated("AUTHN-m1ss", "a bearer token is required (Authorization: Bearer <token>)");
  const failureKeys = deps.failures && call.address ? [{ key: `token:addr:${call.address}`, rule: deps.failures.address }] : [];
  const before = await deps.failures?.limiter.check(failureKeys);
  if (before && !before.allowed) {
    throw errors.resourceExhausted("AUTHN-l1m1", `too many unknown tokens from this address: retry after ${before.retryAfterS} s`);
  }
  const caller = await deps.verifiers.callerOf(m[1]!);
  if (caller === undefined) await deps.failures?.limiter.fail(failureKeys);
  if (!caller) throw errors.unauthenticated("AUTHN-1nv4", "the token is invalid or expired");
  // A user's token is good at its own instance only; the system's members act everywhere.
  if (caller.instanceId !== instance.id && !isSystemMember(caller)) throw errors.unauthenticated("AUTHN-1nst", "the token is invalid or expired");
  return { instance, caller };
}

/** First of the two interceptors: who calls, at which instance. Runs before validation, so that nothing is said to a stranger. */
export function createAuthenticationInterceptor(deps: AuthDeps): Interceptor {
  return (next) => async (req) => {
    if (methodInfo(req.method).isPublic) return next(req);
    const client = req.contextValues.get(clientKey);
    const { instance, caller } = await authenticateCall(deps, {
      // The client's host (behind a trusted proxy, the one it forwarded); else HTTP/1.1's Host header or HTTP/2's
      // :authority, which Connect puts into the URL.
      host: client?.host ?? req.header.get("host") ?? new URL(req.url).host,
      authorization: req.header.get("authorization"),
      address: client && addressKey(client.address),
    });
    req.contextValues.set(hostInstanceKey, instance);
    req.contextValues.set(callerKey, caller);
    return next(req);
  };
}

const isSystemMember = (caller: Caller) => caller.memberships.some((m) => m.contextType === "system");

/** The permissions a caller holds in a context, through its memberships' roles. */
export function permissionsIn(caller: Pick<Caller, "memberships">, target: Target, rolePermissions: Record<string, string[]>): ReadonlySet<string> {
  return permissionsAt(caller, contextOf(target), rolePermissions);
}

async function resolveTarget(deps: AuthDeps, host: InstanceRow, caller: Caller, message: Record<string, unknown>, permission: string): Promise<Target> {
  const ctx = message.ctx as RequestContext | undefined;
  const owner = ctx?.owner;
  if (owner?.case === "system") return { type: "system", instance: host };
  if (owner?.case === "instanceId" || owner?.case === "instanceDomain") {
    const instance = owner.case === "instanceId" ? await deps.tenancy.instanceById(owner.value) : await deps.tenancy.instanceByDomain(owner.value);
    // Another instance than the Host's is the system's business (security review, finding 7): to anyone else it
    // does not exist, as a token of another instance is invalid here.
    if (!instance || (instance.id !== host.id && !isSystemMember(caller))) throw errors.notFound("TENANT-1nst", `instance "${owner.value}" not found`);
    return { type: "instance", instance };
  }
  if (owner?.case === "orgId" || owner?.case === "orgDomain") {
    const org = owner.case === "orgId" ? await deps.tenancy.orgById(host.id, owner.value) : await deps.tenancy.orgByDomain(host.id, owner.value);
    if (!org) throw errors.notFound("TENANT-0rg1", `organization "${owner.value}" not found`);
    return { type: "org", instance: host, org };
  }
  if (typeof message.organizationId === "string" && message.organizationId !== "") {
    const org = await deps.tenancy.orgById(host.id, message.organizationId);
    if (!org) throw errors.notFound("TENANT-0rg2", `organization "${message.organizationId}" not found`);
    return { type: "org", instance: host, org };
  }
  if (permission.startsWith("system.")) return { type: "system", instance: host };
  return { type: "instance", instance: host };
}

/**
 * Second of the two: the context the request acts in, the permission the proto declares for the RPC
 * (PERMISSION_DENIED without it) and the feature flag that gates it (FAILED_PRECONDITION when off).
 */
export function createAuthorizationInterceptor(deps: AuthDeps): Interceptor {
  return (next) => async (req) => {
    const info = methodInfo(req.method);
    if (info.isPublic) return next(req);
    const host = req.contextValues.get(hostInstanceKey);
    const caller = req.contextValues.get(callerKey);
    if (!host || !caller) throw errors.internal("AUTHZ-0rdr", "authorization ran before authentication");
    const message = req.stream ? {} : (req.message as unknown as Record<string, unknown>);
    const target = await resolveTarget(deps, host, caller, message, info.permission);
    refuseBlockedInstance(target);
    const permissions = permissionsIn(caller, target, deps.rolePermissions);
    if (!info.permission) throw errors.permissionDenied("AUTHZ-n0pm", `${req.method.name} declares no permission`);
    // A resource_context handler must check before it answers: authorize, or scope a search (scopeOf,
    // projectsWith). One that returns without either fails closed (below), so a forgotten check cannot
    // leak a resource: every test that calls the RPC successfully would fail.
    let checked = !info.resourceContext;
    const authorize = (where: Target, permission = permissionIn(info, where.type)) => {
      if (permission !== "authenticated") {
        const held = where === target ? permissions : permissionsIn(caller, where, deps.rolePermissions);
        if (!held.has(permission)) throw errors.permissionDenied("AUTHZ-d3ny", `missing permission ${permission} in the ${where.type} context`);
      }
      checked = true;
    };
    // A resource_context RPC is checked by its handler, in the context of the resource it names.
    if (!info.resourceContext) authorize(target);
    if (info.feature) {
      if (!isFeatureName(info.feature)) throw errors.internal("AUTHZ-f3at", `unknown feature ${info.feature}`);
      if (!(await deps.features.enabled(info.feature, target))) {
        throw errors.failedPrecondition("FEAT-0ff1", `the feature flag "${info.feature}" is off for this context`);
      }
    }
    const scopeOf = (permission: string): "all" | string[] => {
      checked = true;
      const instance = target.instance;
      if (permissionsIn(caller, { type: "instance", instance }, deps.rolePermissions).has(permission)) return "all";
      return caller.memberships
        .filter((m) => m.contextType === "org" && m.instanceId === instance.id && m.roles.some((r) => deps.rolePermissions[r]?.includes(permission)))
        .map((m) => m.contextId);
    };
    /** The contexts of one kind (project, project grant) whose membership gives the caller `permission`. */
    const contextsWith = (contextType: string, permission: string) => {
      checked = true;
      return caller.memberships
        .filter(
          (m) => m.contextType === contextType && m.instanceId === target.instance.id && m.roles.some((r) => deps.rolePermissions[r]?.includes(permission)),
        )
        .map((m) => m.contextId);
    };
    const projectsWith = (permission: string) => contextsWith("project", permission);
    const grantsWith = (permission: string) => contextsWith("project_grant", permission);
    const uncovered = async (subjectId: string) =>
      uncoveredMembership(caller, { id: subjectId, memberships: await deps.tenancy.membershipsOf(subjectId) }, deps.rolePermissions, deps.tenancy);
    req.contextValues.set(callInfoKey, {
      hostInstance: host,
      target,
      caller,
      permission: info.permission,
      permissions,
      authorize,
      scopeOf,
      projectsWith,
      grantsWith,
      uncovered,
      permissionsOfRoles: (roles) => [...new Set(roles.flatMap((r) => deps.rolePermissions[r] ?? []))].sort(),
    });
    const res = await next(req);
    if (!checked) throw errors.internal("AUTHZ-f0rg", `${req.method.parent.typeName}/${req.method.name} answered without checking a permission`);
    return res;
  };
}
