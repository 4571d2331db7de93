import { create, type JsonObject, type Message } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { IDP, PatchIDP } from "../../../gen/svc/resources/idp/v3alpha/idp_pb.js";
import { DeleteIDPResponseSchema, type IdentityProviderService, SearchIDPsResponseSchema } from "../../../gen/svc/resources/idp/v3alpha/idp_service_pb.js";
import { type CallInfo, callInfo, clientOf, type Target } from "../../authz/context.js";
import { createIdp, deleteIdp, patchIdpConfig, setIdpStatePolicy } from "../../command/idps.js";
import type { SecretBox } from "../../crypto/secrets.js";
import type { Client } from "../../domain/forwarded.js";
import { IDP_KINDS, providerTypeOf } from "../../domain/idps.js";
import { errors } from "../../errors/errors.js";
import type { EventStore } from "../../eventstore/eventstore.js";
import type { ProjectionCache } from "../../query/cache.js";
import { ownerOf, type IdpQueries } from "../../query/idps.js";
import { isAtOrAbove, sameContext, type ContextRef } from "../../query/reuse.js";
import type { TenancyQueries } from "../../query/tenancy.js";
import type { Database } from "../../storage/database.js";
import { listDetails, listWindow } from "../list.js";
import { loadAuthorized } from "../scope.js";
import { optionsToJson, policyOf, refOfTarget, toDetails, toGetIdp, toGetKind } from "./convert.js";
import { configOfCreate, configOfPatch, type KindMessages, kindMessages } from "./kinds.js";
import { idpSearchOf } from "./search.js";

export interface IdpDeps {
  es: EventStore;
  db: Database;
  cache: ProjectionCache;
  box: SecretBox;
  idps: IdpQueries;
  tenancy: TenancyQueries;
  /** SVC_EXTERNAL_SECURE: the callback URLs are https whatever the request's scheme. */
  secure: boolean;
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
  // A kind's RPCs (`kind`) reach only providers of that kind: another kind's ID is NOT_FOUND there.
  async function resolve(ctx: HandlerContext, id: string, hasCtx: boolean, kind?: KindMessages, permission?: string) {
    const notFound = () => errors.notFound("IDP-n0tf", `identity provider "${id}" not found`);
    const load = async (instanceId: string) => {
      const row = await idps.byId(id);
      const ofKind = !kind || row?.type === providerTypeOf[kind.kind];
      return row && ofKind && (row.instanceId === "" || row.instanceId === instanceId) ? row : null;
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

  const creates = (k: KindMessages) => async (req: CreateRequest, ctx: HandlerContext) => {
    const info = callInfo(ctx);
    const { idp, config } = req.idp!;
    const policy = policyOf(idp!.statePolicy, "idp.idp.state_policy") ?? "activate";
    if (policy === "inherit")
      throw errors.invalidArgument("IDP-1nh1", "invalid idp.idp.state_policy: inherit applies in child contexts; the owning context activates or deactivates");
    const stored = configOfCreate(k, config, "idp.config");
    const details = await createIdp(es, box, {
      kind: k.kind,
      owner: refOfTarget(info.target),
      creator: info.caller.userId,
      ownerPolicy: policy,
      config: { name: idp!.name, options: optionsToJson(idp!.options), config: stored.config },
      secret: stored.secret,
    });
    return { details: toDetails(details) };
  };

  const patches = (k: KindMessages) => async (req: PatchRequest, ctx: HandlerContext) => {
    const { row, owner, acting, creator } = await resolve(ctx, req.id, req.ctx !== undefined, k);
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
      return { details: toDetails(details) };
    }
    if (policy === "inherit")
      throw errors.invalidArgument("IDP-1nh2", "invalid idp.idp.state_policy: inherit applies in child contexts; the owning context activates or deactivates");
    const { config, secret } = configOfPatch(k, row.config as JsonObject, patch.config, "idp.config");
    const details = await patchIdpConfig(es, box, {
      idp: row,
      owner,
      creator,
      changes: { name: patch.idp?.name, options: patch.idp?.options ? optionsToJson(patch.idp.options) : undefined, ownerPolicy: policy, config, secret },
    });
    return { details: toDetails(details) };
  };

  const gets = (k: KindMessages) => async (req: GetRequest, ctx: HandlerContext) => {
    const { row, acting } = await resolve(ctx, req.id, req.ctx !== undefined, k);
    const [view] = await idps.views([row], acting);
    return { idp: toGetKind(k, view!, callbackUrls(k, row.id, clientOf(ctx), deps.secure)) };
  };

  // Create<K>IDP, Patch<K>IDP and Get<K>IDP of every kind: one code path over the kind's messages (kinds.ts).
  const kindHandlers = Object.fromEntries(
    IDP_KINDS.flatMap((kind) => {
      const k = kindMessages[kind];
      return [
        [`create${k.name}IDP`, creates(k)],
        [`patch${k.name}IDP`, patches(k)],
        [`get${k.name}IDP`, gets(k)],
      ];
    }),
  );

  const common: Pick<ServiceImpl<typeof IdentityProviderService>, "deleteIDP" | "searchIDPs"> = {
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
  // The kinds' handlers are built from the service's own descriptors: a kind without its three is caught by
  // test/idp/kinds.test.ts, which calls each RPC of every kind.
  return { ...kindHandlers, ...common } as ServiceImpl<typeof IdentityProviderService>;
}

/** What the handlers of every kind read of their requests (each kind's Create/Patch/Get request has these). */
type CreateRequest = { idp?: { idp?: IDP; config?: Message } };
type PatchRequest = { id: string; ctx?: unknown; idp?: { idp?: PatchIDP; config?: Message } };
type GetRequest = { id: string; ctx?: unknown };

/**
 * Where to register the provider: this server's callback for the redirect kinds, the assertion consumer service
 * and the service provider's metadata for SAML, nothing for LDAP (no redirect). The issuer is the request's
 * (scheme and host, as a trusted proxy forwarded them), as the OIDC endpoints compute theirs.
 */
function callbackUrls(k: KindMessages, id: string, client: Client, secure: boolean): { callbackUrl: string; serviceProviderMetadataUrl?: string } {
  const issuer = `${secure || client.secure ? "https" : "http"}://${client.host.toLowerCase()}`;
  if (k.kind === "ldap") return { callbackUrl: "" };
  if (k.kind === "saml") return { callbackUrl: `${issuer}/idps/${id}/saml/acs`, serviceProviderMetadataUrl: `${issuer}/idps/${id}/saml/metadata` };
  return { callbackUrl: `${issuer}/idps/callback` };
}
