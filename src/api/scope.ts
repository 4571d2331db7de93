import type { HandlerContext } from "@connectrpc/connect";
import { callInfo, type CallInfo, type Target } from "../authz/context.js";
import { errors } from "../errors/errors.js";
import type { ReadScope } from "../query/list.js";
import type { TenancyQueries } from "../query/tenancy.js";

/** The authorization target of an organisation of the request's instance (NOT_FOUND when it is not there). */
export async function orgTarget(tenancy: TenancyQueries, instance: Target["instance"], orgId: string): Promise<Target> {
  const org = await tenancy.orgById(instance.id, orgId);
  if (!org) throw errors.notFound("SCOPE-0rg1", `organization "${orgId}" not found`);
  return { type: "org", instance, org };
}

/** The organisation a create lands in: the one of ctx, else the instance's default organisation. */
export function orgOfRequest(info: CallInfo): string {
  if (info.target.type === "org") return info.target.org.id;
  const id = info.target.instance.defaultOrgId;
  if (!id) throw errors.failedPrecondition("SCOPE-n0d3", "the instance has no default organization; give ctx.org_id");
  return id;
}

/** `permission` in the project's organisation, or through a membership in the project itself. */
export async function authorizeInProject(info: CallInfo, tenancy: TenancyQueries, orgId: string, projectId: string, permission?: string): Promise<void> {
  const target = await orgTarget(tenancy, info.target.instance, orgId);
  try {
    info.authorize(target, permission);
  } catch (denied) {
    if (permission && info.projectsWith(permission).includes(projectId)) return;
    throw denied;
  }
}

/**
 * What a search may return: with an organisation in ctx, that organisation (checked); else every organisation
 * where the caller holds `permission`, and the projects it is a member of with it.
 */
export function readableScope(info: CallInfo, permission: string): ReadScope {
  if (info.target.type === "org") {
    info.authorize(info.target, permission);
    return { orgIds: [info.target.org.id], projectIds: [] };
  }
  return { orgIds: info.scopeOf(permission), projectIds: info.projectsWith(permission) };
}

/** Where a loaded resource's permission is checked: its organisation, and its project when it has one. */
export type ResourcePlace = { orgId: string; projectId?: string } | { target: Target };

/**
 * The one way a handler reaches the resource a request names: loads it in the request's instance (another
 * instance's resource is NOT_FOUND, as a missing one), checks the RPC's declared permission where the resource
 * lives (in its organisation, or through a membership of its project), and returns it with the arguments every
 * command takes. `notFound` carries the service's own error ID.
 */
export async function loadAuthorized<R>(
  ctx: HandlerContext,
  tenancy: TenancyQueries,
  id: string,
  load: (instanceId: string) => Promise<R | null>,
  notFound: () => Error,
  placeOf: (row: R, info: CallInfo) => ResourcePlace | Promise<ResourcePlace>,
  permission?: string,
): Promise<{ row: R; info: CallInfo; args: { instanceId: string; id: string; creator: string } }> {
  const info = callInfo(ctx);
  const instanceId = info.target.instance.id;
  const row = await load(instanceId);
  if (!row) throw notFound();
  const place = await placeOf(row, info);
  const wanted = permission ?? info.permission;
  if ("target" in place) info.authorize(place.target, wanted);
  else if (place.projectId) await authorizeInProject(info, tenancy, place.orgId, place.projectId, wanted);
  else info.authorize(await orgTarget(tenancy, info.target.instance, place.orgId), wanted);
  return { row, info, args: { instanceId, id, creator: info.caller.userId } };
}
