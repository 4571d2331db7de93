import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { GetOrganizationSchema, OrganizationState } from "../../../gen/svc/resources/org/v3alpha/org_pb.js";
import {
  CreateOrganizationResponseSchema,
  DeactivateOrganizationResponseSchema,
  DeleteOrganizationResponseSchema,
  GetInstanceDefaultResponseSchema,
  GetOrganizationResponseSchema,
  type OrganizationService,
  PatchOrganizationResponseSchema,
  ReactivateOrganizationResponseSchema,
  SearchOrganizationsResponseSchema,
  SetAsInstanceDefaultResponseSchema,
} from "../../../gen/svc/resources/org/v3alpha/org_service_pb.js";
import { type CallInfo, callInfo } from "../../authz/context.js";
import type { ChangeDetails } from "../../command/aggregate.js";
import { changeOrg, createOrg, setDefaultOrg } from "../../command/orgs.js";
import { errors } from "../../errors/errors.js";
import { OrgQueries, type OrgRow, type OrgView } from "../../query/orgs.js";
import { toResourceDetails } from "../convert.js";
import type { ResourceDeps } from "../deps.js";
import { listDetails, listWindow } from "../list.js";
import { loadAuthorized, readableScope } from "../scope.js";
import { orgSearchOf } from "./search.js";

export interface OrgDeps extends ResourceDeps {
  /** SVC_EXTERNAL_DOMAIN: the domain generated organisation domains end in, where the instance has it. */
  externalDomain: string;
}

/** The instance domain that organisation domains are made from: its primary one, else a name rather than an address. */
function domainBase(primary: string | null, domains: string[], externalDomain: string): string {
  if (primary) return primary;
  if (domains.includes(externalDomain.toLowerCase())) return externalDomain.toLowerCase();
  return domains.find((d) => /[a-z]/.test(d) && !d.includes(":")) ?? domains[0] ?? externalDomain;
}

const toGetOrg = (o: OrgView, defaultOrgId: string | null) =>
  create(GetOrganizationSchema, {
    details: toResourceDetails({ id: o.id, sequence: o.sequence, changeDate: o.changeDate, resourceOwner: o.instanceId }, "instance"),
    name: o.name,
    state: o.state === "inactive" ? OrganizationState.INACTIVE : OrganizationState.ACTIVE,
    primaryDomain: o.primaryDomain,
    isInstanceDefault: o.id === defaultOrgId,
  });

export function orgService(deps: OrgDeps): ServiceImpl<typeof OrganizationService> {
  const { es } = deps;
  const orgs = new OrgQueries(deps.db, deps.cache);
  // Organisations belong to their instance.
  const details = (d: ChangeDetails) => toResourceDetails({ ...d, resourceOwner: d.instanceId }, "instance");

  /** The organisation a request names, checked in itself. Organisations of other instances are NOT_FOUND. */
  async function resolve(ctx: HandlerContext, id: string) {
    const notFound = () => errors.notFound("ORG-n0t3", `organization "${id}" not found`);
    const place = (org: OrgRow, info: CallInfo) => ({ target: { type: "org" as const, instance: info.target.instance, org } });
    const { row, info, args } = await loadAuthorized(ctx, deps.tenancy, id, (i) => orgs.byId(i, id), notFound, place);
    return { org: row, instance: info.target.instance, args };
  }

  return {
    async createOrganization(req, ctx) {
      const info = callInfo(ctx);
      if (info.target.type === "org") throw errors.invalidArgument("ORG-ctx1", "invalid ctx: organizations are created in an instance");
      const domain = domainBase(info.target.instance.primaryDomain, await deps.tenancy.domainsOf(info.target.instance.id), deps.externalDomain);
      const d = await createOrg(es, { instanceId: info.target.instance.id, name: req.organization!.name, domain, creator: info.caller.userId });
      return create(CreateOrganizationResponseSchema, { details: details(d) });
    },

    async patchOrganization(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      const name = req.organization!.name;
      return create(PatchOrganizationResponseSchema, {
        details: details(await changeOrg(es, { ...args, action: "rename", ...(name !== undefined ? { name } : {}) })),
      });
    },

    async getOrganization(req, ctx) {
      const { org, instance } = await resolve(ctx, req.id);
      return create(GetOrganizationResponseSchema, { organization: toGetOrg(org, instance.defaultOrgId) });
    },

    async deleteOrganization(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      return create(DeleteOrganizationResponseSchema, { details: details(await changeOrg(es, { ...args, action: "remove" })) });
    },

    async searchOrganizations(req, ctx) {
      const info = callInfo(ctx);
      const instance = info.target.instance;
      const page = await orgs.search(instance.id, readableScope(info, "org.read"), orgSearchOf(req), listWindow(req.query));
      return create(SearchOrganizationsResponseSchema, {
        details: listDetails(page),
        sortingColumn: req.sortingColumn,
        result: page.rows.map((o) => toGetOrg(o, instance.defaultOrgId)),
      });
    },

    async deactivateOrganization(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      return create(DeactivateOrganizationResponseSchema, { details: details(await changeOrg(es, { ...args, action: "deactivate" })) });
    },

    async reactivateOrganization(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      return create(ReactivateOrganizationResponseSchema, { details: details(await changeOrg(es, { ...args, action: "reactivate" })) });
    },

    async setAsInstanceDefault(req, ctx) {
      const info = callInfo(ctx);
      const d = await setDefaultOrg(es, { instanceId: info.target.instance.id, orgId: req.id, creator: info.caller.userId });
      return create(SetAsInstanceDefaultResponseSchema, { details: details(d) });
    },

    async getInstanceDefault(_req, ctx) {
      const instance = callInfo(ctx).target.instance;
      const defaultOrgId = instance.defaultOrgId;
      // The default organisation is one of the instance's (setDefaultOrg checks).
      const org = defaultOrgId ? await orgs.byId(instance.id, defaultOrgId) : null;
      if (!org) throw errors.notFound("ORG-n0d4", "the instance has no default organization");
      return create(GetInstanceDefaultResponseSchema, { organization: toGetOrg(org, defaultOrgId) });
    },
  };
}
