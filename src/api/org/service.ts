import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { Org as OrgRow, Prisma as P } from "../../../gen/prisma/client.js";
import {
  GetOrganizationSchema,
  OrganizationFieldName,
  OrganizationState,
  type OrganizationSearchFilter,
} from "../../../gen/svc/resources/org/v3alpha/org_pb.js";
import {
  CreateOrganizationResponseSchema,
  DeactivateOrganizationResponseSchema,
  DeleteOrganizationResponseSchema,
  GetInstanceDefaultResponseSchema,
  GetOrganizationResponseSchema,
  OrganizationService,
  PatchOrganizationResponseSchema,
  ReactivateOrganizationResponseSchema,
  SearchOrganizationsResponseSchema,
  SetAsInstanceDefaultResponseSchema,
} from "../../../gen/svc/resources/org/v3alpha/org_service_pb.js";
import { callInfo } from "../../authz/context.js";
import type { ChangeDetails } from "../../command/aggregate.js";
import { changeOrg, createOrg, setDefaultOrg } from "../../command/orgs.js";
import { errors } from "../../errors/errors.js";
import type { EventStore } from "../../eventstore/eventstore.js";
import type { ProjectionCache } from "../../query/cache.js";
import { countKey, searchPage, textFilter } from "../../query/list.js";
import type { TenancyQueries } from "../../query/tenancy.js";
import type { Database } from "../../storage/database.js";
import { toResourceDetails } from "../convert.js";
import { readableScope } from "../scope.js";

export interface OrgDeps {
  es: EventStore;
  db: Database;
  cache: ProjectionCache;
  tenancy: TenancyQueries;
  /** SVC_EXTERNAL_DOMAIN: the domain generated organisation domains end in, where the instance has it. */
  externalDomain: string;
}

/** The instance domain that organisation domains are made from: the external one, else a name rather than an address. */
function domainBase(domains: string[], externalDomain: string): string {
  if (domains.includes(externalDomain.toLowerCase())) return externalDomain.toLowerCase();
  return domains.find((d) => /[a-z]/.test(d) && !d.includes(":")) ?? domains[0] ?? externalDomain;
}

const sortColumns: Record<OrganizationFieldName, keyof P.OrgOrderByWithRelationInput> = {
  [OrganizationFieldName.UNSPECIFIED]: "createdAt",
  [OrganizationFieldName.ID]: "id",
  [OrganizationFieldName.CREATION_DATE]: "createdAt",
  [OrganizationFieldName.CHANGE_DATE]: "changeDate",
  [OrganizationFieldName.NAME]: "name",
};

function filterWhere(f: OrganizationSearchFilter): P.OrgWhereInput {
  switch (f.filter.case) {
    case "inIds":
      return { id: { in: f.filter.value.ids } };
    case "name":
      return { name: textFilter(f.filter.value.name, f.filter.value.method) };
    case "domain":
      return { primaryDomain: textFilter(f.filter.value.domain, f.filter.value.method) };
    case "state":
      return { state: f.filter.value.state === OrganizationState.INACTIVE ? "inactive" : "active" };
    default:
      return {};
  }
}

const toGetOrg = (o: OrgRow, defaultOrgId: string | null) =>
  create(GetOrganizationSchema, {
    details: toResourceDetails({ ...o, resourceOwner: o.instanceId }, "instance"),
    name: o.name,
    state: o.state === "inactive" ? OrganizationState.INACTIVE : OrganizationState.ACTIVE,
    primaryDomain: o.primaryDomain,
    isInstanceDefault: o.id === defaultOrgId,
  });

export function orgService(deps: OrgDeps): ServiceImpl<typeof OrganizationService> {
  const { es, db } = deps;
  // Organisations belong to their instance.
  const details = (d: ChangeDetails) => toResourceDetails({ ...d, resourceOwner: d.instanceId }, "instance");

  /** The organisation a request names, checked in itself. Organisations of other instances are NOT_FOUND. */
  async function resolve(ctx: HandlerContext, id: string) {
    const info = callInfo(ctx);
    const instance = info.target.instance;
    const org = await db.prisma.org.findFirst({ where: { id, instanceId: instance.id } });
    if (!org) throw errors.notFound("ORG-n0t3", `organization "${id}" not found`);
    info.authorize({ type: "org", instance, org });
    return { org, instance, args: { instanceId: instance.id, id, creator: info.caller.userId } };
  }


  return {
    async createOrganization(req, ctx) {
      const info = callInfo(ctx);
      if (info.target.type === "org") throw errors.invalidArgument("ORG-ctx1", "invalid ctx: organizations are created in an instance");
      const domain = domainBase(await deps.tenancy.domainsOf(info.target.instance.id), deps.externalDomain);
      const d = await createOrg(es, { instanceId: info.target.instance.id, name: req.organization!.name, domain, creator: info.caller.userId });
      return create(CreateOrganizationResponseSchema, { details: details(d) });
    },

    async patchOrganization(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      const name = req.organization!.name;
      return create(PatchOrganizationResponseSchema, { details: details(await changeOrg(es, { ...args, action: "rename", ...(name !== undefined ? { name } : {}) })) });
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
      const instanceId = info.target.instance.id;
      const { orgIds } = readableScope(info, "org.read");
      const scope: P.OrgWhereInput = orgIds === "all" ? {} : { id: { in: orgIds } };
      const where: P.OrgWhereInput = { AND: [{ instanceId }, scope, ...req.filters.map(filterWhere)] };
      const { rows, details } = await searchPage(db, deps.cache, req.query, countKey("org", where), ({ skip, take, order }) => {
        const orderBy = [{ [sortColumns[req.sortingColumn]]: order }, { id: order }] as P.OrgOrderByWithRelationInput[];
        return [db.prisma.org.findMany({ where, orderBy, skip, take }), () => db.prisma.org.count({ where })];
      });
      return create(SearchOrganizationsResponseSchema, {
        details,
        sortingColumn: req.sortingColumn,
        result: rows.map((o) => toGetOrg(o, info.target.instance.defaultOrgId)),
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
      const defaultOrgId = callInfo(ctx).target.instance.defaultOrgId;
      const org = defaultOrgId ? await db.prisma.org.findUnique({ where: { id: defaultOrgId } }) : null;
      if (!org) throw errors.notFound("ORG-n0d4", "the instance has no default organization");
      return create(GetInstanceDefaultResponseSchema, { organization: toGetOrg(org, defaultOrgId) });
    },
  };
}
