import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  AddOrganizationDomainResponseSchema,
  DomainValidationType,
  GenerateValidationResponseSchema,
  GetOrganizationDomainResponseSchema,
  type OrganizationDomainService,
  OrganizationDomainSchema,
  RemoveOrganizationDomainResponseSchema,
  SearchOrganizationDomainsResponseSchema,
  SetAsPrimaryResponseSchema,
  ValidateResponseSchema,
} from "../../../gen/svc/resources/org/v3alpha/org_domain_service_pb.js";
import type { ChangeDetails } from "../../command/aggregate.js";
import { addOrgDomain, generateOrgDomainValidation, recordOrgDomainValidation, removeOrgDomain, setPrimaryOrgDomain } from "../../command/org-domains.js";
import { inheritanceChain } from "../../domain/contexts.js";
import type { ValidationType } from "../../domain/org-domains.js";
import { errors } from "../../errors/errors.js";
import type { DomainValidator } from "../../net/domain-validation.js";
import { listDetails, listWindow } from "../list.js";
import { OrgDomainQueries, type OrgDomainView } from "../../query/org-domains.js";
import { OrgQueries } from "../../query/orgs.js";
import type { SettingsQueries } from "../../query/settings.js";
import { orgRowDetails, toResourceDetails } from "../convert.js";
import type { ResourceDeps } from "../deps.js";
import { loadAuthorized } from "../scope.js";

export interface OrgDomainDeps extends ResourceDeps {
  settings: SettingsQueries;
  validator: DomainValidator;
}

const types: Record<ValidationType, DomainValidationType> = { http: DomainValidationType.HTTP, dns: DomainValidationType.DNS };

const toDomain = (d: OrgDomainView) =>
  create(OrganizationDomainSchema, {
    details: orgRowDetails(d.domain, d),
    organizationId: d.orgId,
    domain: d.domain,
    isVerified: d.verified,
    isPrimary: d.isPrimary,
    isGenerated: d.generated,
    validationType: types[d.validationType as ValidationType] ?? DomainValidationType.UNSPECIFIED,
  });

/** Organisation domains: each RPC checks its permission in the organisation it names (resource_context). */
export function orgDomainService(deps: OrgDomainDeps): ServiceImpl<typeof OrganizationDomainService> {
  const { es, db } = deps;
  const orgs = new OrgQueries(db, deps.cache);
  const orgDomains = new OrgDomainQueries(db, deps.cache);
  const details = (d: ChangeDetails, domain: string) => toResourceDetails({ ...d, id: domain }, "org");

  async function resolve(ctx: HandlerContext, orgId: string) {
    const notFound = () => errors.notFound("ODOM-n0t3", `organization "${orgId}" not found`);
    const { args, row } = await loadAuthorized(
      ctx,
      deps.tenancy,
      orgId,
      (i) => orgs.byId(i, orgId),
      notFound,
      (o) => ({ orgId: o.id }),
    );
    return { who: { instanceId: args.instanceId, orgId: row.id, creator: args.creator } };
  }

  async function domainRow(orgId: string, domain: string) {
    const row = await orgDomains.byName(orgId, domain);
    if (!row) throw errors.notFound("ODOM-n0t4", `domain "${domain}" of organization "${orgId}" not found`);
    return row;
  }

  return {
    async addOrganizationDomain(req, ctx) {
      const { who } = await resolve(ctx, req.organizationId);
      const policy = await deps.settings.values("domain", inheritanceChain({ type: "org", instanceId: who.instanceId, orgId: who.orgId }));
      const verified = !policy.validate_org_domains;
      const d = await addOrgDomain(es, { ...who, domain: req.domain, verified });
      return create(AddOrganizationDomainResponseSchema, { details: details(d, req.domain.trim().toLowerCase()), isVerified: verified });
    },

    async getOrganizationDomain(req, ctx) {
      await resolve(ctx, req.organizationId);
      return create(GetOrganizationDomainResponseSchema, { domain: toDomain(await domainRow(req.organizationId, req.domain)) });
    },

    async searchOrganizationDomains(req, ctx) {
      await resolve(ctx, req.organizationId);
      const criteria = { domainContains: req.domainContains, verifiedOnly: req.verifiedOnly };
      const page = await orgDomains.search(req.organizationId, criteria, listWindow(req.query));
      return create(SearchOrganizationDomainsResponseSchema, {
        details: listDetails(page),
        result: page.rows.map(toDomain),
      });
    },

    async removeOrganizationDomain(req, ctx) {
      const { who } = await resolve(ctx, req.organizationId);
      return create(RemoveOrganizationDomainResponseSchema, { details: details(await removeOrgDomain(es, { ...who, domain: req.domain }), req.domain) });
    },

    async setAsPrimary(req, ctx) {
      const { who } = await resolve(ctx, req.organizationId);
      return create(SetAsPrimaryResponseSchema, { details: details(await setPrimaryOrgDomain(es, { ...who, domain: req.domain }), req.domain) });
    },

    async generateValidation(req, ctx) {
      const { who } = await resolve(ctx, req.organizationId);
      const validationType: ValidationType = req.type === DomainValidationType.DNS ? "dns" : "http";
      const d = await generateOrgDomainValidation(es, { ...who, domain: req.domain, validationType });
      const domain = req.domain.trim().toLowerCase();
      return create(GenerateValidationResponseSchema, {
        details: details(d, domain),
        token: d.token,
        url: validationType === "http" ? deps.validator.url(domain, d.token) : "",
        dnsName: validationType === "dns" ? deps.validator.dnsName(domain) : "",
      });
    },

    async validate(req, ctx) {
      const { who } = await resolve(ctx, req.organizationId);
      const row = await domainRow(who.orgId, req.domain);
      if (row.verified) return create(ValidateResponseSchema, { details: details({ ...who, id: row.domain, ...row, resourceOwner: row.orgId }, row.domain) });
      if (!row.validationToken) throw errors.failedPrecondition("ODOM-n0g3", `"${row.domain}" has no validation: generate one first`);
      // The check runs outside any transaction (it may take seconds); the command then records it for the
      // token it checked, refusing when a newer one was generated meanwhile.
      const problem = await deps.validator.problem(row.validationType as ValidationType, row.domain, row.validationToken);
      const d = await recordOrgDomainValidation(es, { ...who, domain: row.domain, token: row.validationToken, problem });
      if (problem) throw errors.failedPrecondition("ODOM-f41l", `"${row.domain}" could not be validated: ${problem}`);
      return create(ValidateResponseSchema, { details: details(d, row.domain) });
    },
  };
}
