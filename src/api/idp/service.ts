import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  CreateGitLabIDPResponseSchema,
  DeleteIDPResponseSchema,
  GetGitLabIDPResponseSchema,
  type IdentityProviderService,
  PatchGitLabIDPResponseSchema,
  SearchIDPsResponseSchema,
} from "../../../gen/svc/resources/idp/v3alpha/idp_service_pb.js";
import { type CallInfo, callInfo, type Target } from "../../authz/context.js";
import { createGitlabIdp, deleteIdp, patchIdpConfig, setIdpStatePolicy } from "../../command/idps.js";
import type { SecretBox } from "../../crypto/secrets.js";
import { errors } from "../../errors/errors.js";
import type { EventStore } from "../../eventstore/eventstore.js";
import type { ProjectionCache } from "../../query/cache.js";
import { ownerOf, type IdpQueries } from "../../query/idps.js";
import { isAtOrAbove, sameContext, type ContextRef } from "../../query/reuse.js";
import type { TenancyQueries } from "../../query/tenancy.js";
import { listDetails, listWindow } from "../list.js";
import { loadAuthorized } from "../scope.js";
import type { Database } from "../../storage/database.js";
import { optionsToJson, policyOf, refOfTarget, toDetails, toGetGitlabIdp, toGetIdp } from "./convert.js";
import { idpSearchOf } from "./search.js";

export interface IdpDeps {
  es: EventStore;
  db: Database;
  cache: ProjectionCache;
  box: SecretBox;
  idps: IdpQueries;
  tenancy: TenancyQueries;
}

export function idpService(deps: IdpDeps): ServiceImpl<typeof IdentityProviderService> {
  const { es, box, idps, tenancy } = deps;

  /** The authorization target of a context, for the permission check in the resource's context. */
  async function targetOf(ref: ContextRef, host: Target["instance"]): Promise<Target> {
    if (ref.type === "system") return { type: "system", instance: host };
    const instance = await tenancy.instanceById(ref.instanceId);
    if (!instance) throw errors.notFound("IDP-1nst", `instance "${ref.instanceId}" not found`);
    if (ref.type === "instance") return { type: "instance", instance };
    const org = await tenancy.orgById(ref.instanceId, ref.id);
    if (!org) throw errors.notFound("IDP-0rg1", `organization "${ref.id}" not found`);
    return { type: "org", instance, org };
  }

  /**
   * The provider a request names, and the context it acts in: the request's ctx when given (it must be the
   * owner or below it), else the owner. Providers of other instances, or not visible from ctx, are NOT_FOUND.
   */
  // A reusable resource: visible from its own context and those below it (system > instance > organisation),
  // and checked in the context the request acts in, else in its owner's.
  async function resolve(ctx: HandlerContext, id: string, hasCtx: boolean, permission?: string) {
    const notFound = () => errors.notFound("IDP-n0tf", `identity provider "${id}" not found`);
    const load = async (instanceId: string) => {
      const row = await idps.byId(id);
      return row && (row.instanceId === "" || row.instanceId === instanceId) ? row : null;
    };
    const place = async (row: NonNullable<Awaited<ReturnType<typeof load>>>, info: CallInfo) => {
      const owner = ownerOf(row);
      if (!isAtOrAbove(owner, hasCtx ? refOfTarget(info.target) : owner)) throw notFound();
      return { target: hasCtx ? info.target : await targetOf(owner, info.target.instance) };
    };
    const { row, info } = await loadAuthorized(ctx, tenancy, id, load, notFound, place, permission);
    const owner = ownerOf(row);
    return { row, owner, acting: hasCtx ? refOfTarget(info.target) : owner, creator: info.caller.userId };
  }

  return {
    async createGitLabIDP(req, ctx) {
      const info = callInfo(ctx);
      const { idp, config } = req.idp!;
      const policy = policyOf(idp!.statePolicy, "idp.idp.state_policy") ?? "activate";
      if (policy === "inherit")
        throw errors.invalidArgument(
          "IDP-1nh1",
          "invalid idp.idp.state_policy: inherit applies in child contexts; the owning context activates or deactivates",
        );
      const details = await createGitlabIdp(es, box, {
        owner: refOfTarget(info.target),
        creator: info.caller.userId,
        ownerPolicy: policy,
        config: { name: idp!.name, options: optionsToJson(idp!.options), clientId: config!.clientId, scopes: config!.scopes },
        clientSecret: config!.clientSecret || undefined,
      });
      return create(CreateGitLabIDPResponseSchema, { details: toDetails(details) });
    },

    async patchGitLabIDP(req, ctx) {
      const { row, owner, acting, creator } = await resolve(ctx, req.id, req.ctx !== undefined);
      const patch = req.idp!;
      const policy = patch.idp?.statePolicy !== undefined ? policyOf(patch.idp.statePolicy, "idp.idp.state_policy") : undefined;
      if (!sameContext(owner, acting)) {
        const touchesConfig = patch.config !== undefined || patch.idp?.name !== undefined || patch.idp?.options !== undefined;
        if (touchesConfig) {
          throw errors.failedPrecondition(
            "IDP-r3ad",
            `the configuration of identity provider "${row.id}" is read-only here: it belongs to the ${owner.type} context${owner.id ? ` ${owner.id}` : ""}; only idp.state_policy can change`,
          );
        }
        const details = policy
          ? await setIdpStatePolicy(es, { idp: row, owner, context: acting, creator, policy })
          : { id: row.id, sequence: row.sequence, changeDate: row.changeDate, owner };
        return create(PatchGitLabIDPResponseSchema, { details: toDetails(details) });
      }
      if (policy === "inherit")
        throw errors.invalidArgument(
          "IDP-1nh2",
          "invalid idp.idp.state_policy: inherit applies in child contexts; the owning context activates or deactivates",
        );
      const c = patch.config;
      const details = await patchIdpConfig(es, box, {
        idp: row,
        owner,
        creator,
        changes: {
          name: patch.idp?.name,
          options: patch.idp?.options ? optionsToJson(patch.idp.options) : undefined,
          ownerPolicy: policy,
          clientId: c?.clientId,
          scopes: c && (c.replaceScopes || c.scopes.length) ? c.scopes : undefined,
          clientSecret: c?.clientSecret,
        },
      });
      return create(PatchGitLabIDPResponseSchema, { details: toDetails(details) });
    },

    async getGitLabIDP(req, ctx) {
      const { row, acting } = await resolve(ctx, req.id, req.ctx !== undefined);
      const [view] = await idps.views([row], acting);
      return create(GetGitLabIDPResponseSchema, { idp: toGetGitlabIdp(view!) });
    },

    async deleteIDP(req, ctx) {
      // Only the owning context deletes: the request names no context.
      const { row, owner, creator } = await resolve(ctx, req.id, false);
      return create(DeleteIDPResponseSchema, { details: toDetails(await deleteIdp(es, { idp: row, owner, creator })) });
    },

    async searchIDPs(req, ctx) {
      const page = await idps.search(deps.cache, refOfTarget(callInfo(ctx).target), idpSearchOf(req), listWindow(req.query));
      return create(SearchIDPsResponseSchema, { details: listDetails(page), sortingColumn: req.sortingColumn, result: page.rows.map(toGetIdp) });
    },
  };
}
