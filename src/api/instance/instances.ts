import { create } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import {
  AddInstanceDomainResponseSchema,
  type AddInstanceDomainRequest,
  CreateInstanceResponseSchema,
  type CreateInstanceRequest,
  DeleteInstanceResponseSchema,
  type DeleteInstanceRequest,
  GetInstanceResponseSchema,
  type GetInstanceRequest,
  InstanceSchema,
  PatchInstanceResponseSchema,
  type PatchInstanceRequest,
  RemoveInstanceDomainResponseSchema,
  type RemoveInstanceDomainRequest,
  SetPrimaryInstanceDomainResponseSchema,
  type SetPrimaryInstanceDomainRequest,
  SearchInstancesResponseSchema,
  type SearchInstancesRequest,
} from "../../../gen/svc/resources/instance/v3alpha/instance_service_pb.js";
import { callInfo } from "../../authz/context.js";
import {
  addInstanceDomain,
  createInstance,
  type FirstAdmin,
  removeInstance,
  removeInstanceDomain,
  renameInstance,
  setPrimaryInstanceDomain,
} from "../../command/instances.js";
import { passwordHashOf } from "../../command/users.js";
import { errors } from "../../errors/errors.js";
import type { StoredEvent } from "../../eventstore/eventstore.js";
import type { InstanceFilter, InstanceQueries, InstanceView } from "../../query/instances.js";
import { criteriaOf, listDetails, listWindow } from "../list.js";
import { passwordRules } from "../../query/password-rules.js";
import { toResourceDetails } from "../convert.js";
import type { InstanceDeps } from "./service.js";

const HOST = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

function checkDomain(domain: string, field: string): string {
  if (!HOST.test(domain)) throw errors.invalidArgument("INST-h0st", `invalid ${field}: "${domain.slice(0, 100)}" is not a lower-case host name`);
  return domain;
}

const detailsOf = (e: StoredEvent) =>
  toResourceDetails({ id: e.aggregateId, sequence: e.sequence, changeDate: e.createdAt, resourceOwner: e.aggregateId }, "instance");

/** The instances' life cycle in the system API (limits: service.ts). */
export function instanceHandlers(deps: InstanceDeps, instances: InstanceQueries) {
  const creator = (ctx: HandlerContext) => callInfo(ctx).caller.userId;
  const toInstance = (row: InstanceView, domains: string[]) =>
    create(InstanceSchema, {
      details: toResourceDetails({ id: row.id, sequence: row.sequence, changeDate: row.changeDate, resourceOwner: row.id }, "instance"),
      name: row.name,
      domains,
      defaultOrgId: row.defaultOrgId ?? "",
      primaryDomain: row.primaryDomain ?? "",
      blocked: row.blocked,
      ...(row.auditLogRetentionS ? { auditLogRetention: durationFromMs(row.auditLogRetentionS * 1000) } : {}),
    });
  const domainsOf = async (ids: string[]) => {
    const byInstance = await instances.domainsOf(ids);
    return (id: string) => byInstance.get(id) ?? [];
  };
  return {
    async createInstance(req: CreateInstanceRequest, ctx: HandlerContext) {
      if (!req.domains.length) throw errors.invalidArgument("INST-n0dm", "invalid domains: give at least one");
      const domains = [...new Set(req.domains.map((d, i) => checkDomain(d, `domains[${i}]`)))];
      let admin: FirstAdmin;
      const a = req.administrator;
      if (a.case === "human") {
        // A new instance has no settings yet: the system's password rules apply.
        const rules = await passwordRules(deps.settings, "", "");
        const passwordHash = await passwordHashOf({ plain: a.value.password, changeRequired: false }, rules.problem, "human.password");
        admin = {
          kind: "human",
          username: a.value.username,
          passwordHash,
          passwordChangeRequired: a.value.passwordChangeRequired,
          ...(a.value.email ? { email: a.value.email } : {}),
          ...(a.value.givenName ? { givenName: a.value.givenName } : {}),
          ...(a.value.familyName ? { familyName: a.value.familyName } : {}),
        };
      } else admin = { kind: "machine", username: a.value!.username, name: a.value!.name };
      const made = await createInstance(deps.es, { name: req.name, domains, orgName: req.firstOrgName, admins: [admin], creator: creator(ctx) });
      return create(CreateInstanceResponseSchema, { details: detailsOf(made.event), pat: made.pat ?? "" });
    },

    async getInstance(req: GetInstanceRequest) {
      const row = await instances.byId(req.instanceId);
      if (!row) throw errors.notFound("INST-n0t1", `instance "${req.instanceId}" not found`);
      return create(GetInstanceResponseSchema, { instance: toInstance(row, (await domainsOf([row.id]))(row.id)) });
    },

    async searchInstances(req: SearchInstancesRequest) {
      const filters = criteriaOf(req.filters, (f): InstanceFilter => (f.case === "inIds" ? { case: "inIds", value: f.value.ids } : f));
      const page = await instances.search(filters, listWindow(req.query));
      const domains = await domainsOf(page.rows.map((r) => r.id));
      return create(SearchInstancesResponseSchema, {
        details: listDetails(page),
        result: page.rows.map((r) => toInstance(r, domains(r.id))),
      });
    },

    async patchInstance(req: PatchInstanceRequest, ctx: HandlerContext) {
      const [e] = await renameInstance(deps.es, { instanceId: req.instanceId, creator: creator(ctx), name: req.name });
      return create(PatchInstanceResponseSchema, { details: detailsOf(e!) });
    },

    async deleteInstance(req: DeleteInstanceRequest, ctx: HandlerContext) {
      if (req.instanceId === callInfo(ctx).hostInstance.id) {
        throw errors.failedPrecondition("INST-s3lf", "the instance this call comes through cannot delete itself: call through another instance's domain");
      }
      const [e] = await removeInstance(deps.es, { instanceId: req.instanceId, creator: creator(ctx) });
      return create(DeleteInstanceResponseSchema, { details: detailsOf(e!) });
    },

    async addInstanceDomain(req: AddInstanceDomainRequest, ctx: HandlerContext) {
      const domain = checkDomain(req.domain, "domain");
      const [e] = await addInstanceDomain(deps.es, { instanceId: req.instanceId, creator: creator(ctx), domain });
      return create(AddInstanceDomainResponseSchema, { details: detailsOf(e!) });
    },

    async removeInstanceDomain(req: RemoveInstanceDomainRequest, ctx: HandlerContext) {
      const [e] = await removeInstanceDomain(deps.es, { instanceId: req.instanceId, creator: creator(ctx), domain: req.domain });
      return create(RemoveInstanceDomainResponseSchema, { details: detailsOf(e!) });
    },

    async setPrimaryInstanceDomain(req: SetPrimaryInstanceDomainRequest, ctx: HandlerContext) {
      const events = await setPrimaryInstanceDomain(deps.es, { instanceId: req.instanceId, creator: creator(ctx), domain: req.domain });
      const e = events.at(-1);
      // Already primary: nothing was written, the instance's current details answer.
      const row = e ? undefined : await instances.byIdOrThrow(req.instanceId);
      const details = e
        ? detailsOf(e)
        : toResourceDetails({ id: row!.id, sequence: row!.sequence, changeDate: row!.changeDate, resourceOwner: row!.id }, "instance");
      return create(SetPrimaryInstanceDomainResponseSchema, { details });
    },
  };
}
