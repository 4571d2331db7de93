import type { CallInfo, Target } from "../authz/context.js";
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
