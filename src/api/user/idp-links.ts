import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import {
  AddIDPLinkResponseSchema,
  type AddIDPLinkRequest,
  IDPLinkSchema,
  RemoveIDPLinkResponseSchema,
  type RemoveIDPLinkRequest,
  SearchIDPLinksResponseSchema,
  type SearchIDPLinksRequest,
} from "../../../gen/svc/resources/user/v3alpha/user_service_pb.js";
import type { ChangeDetails } from "../../command/aggregate.js";
import { addIdpLink, removeIdpLink } from "../../command/idp-links.js";
import { searchUserIdpLinks } from "../../query/user-idp-links.js";
import type { toResourceDetails } from "../convert.js";
import { listDetails, listWindow } from "../list.js";
import type { UserDeps } from "./service.js";

type Resolved = { args: { instanceId: string; id: string; creator: string } };

/** The user API's links to accounts at identity providers (contract, "Links"): add, remove, search. */
export function idpLinkHandlers(
  deps: UserDeps,
  resolve: (ctx: HandlerContext, id: string) => Promise<Resolved>,
  details: (d: ChangeDetails) => ReturnType<typeof toResourceDetails>,
) {
  return {
    async addIDPLink(req: AddIDPLinkRequest, ctx: HandlerContext) {
      const { args } = await resolve(ctx, req.id);
      const link = { idpId: req.idpId, externalUserId: req.userId, displayName: req.userName };
      const d = await addIdpLink(deps.es, { instanceId: args.instanceId, userId: args.id, creator: args.creator, link });
      return create(AddIDPLinkResponseSchema, { details: details(d) });
    },
    async removeIDPLink(req: RemoveIDPLinkRequest, ctx: HandlerContext) {
      const { args } = await resolve(ctx, req.id);
      const d = await removeIdpLink(deps.es, {
        instanceId: args.instanceId,
        userId: args.id,
        creator: args.creator,
        idpId: req.idpId,
        externalUserId: req.linkedUserId,
      });
      return create(RemoveIDPLinkResponseSchema, { details: details(d) });
    },
    async searchIDPLinks(req: SearchIDPLinksRequest, ctx: HandlerContext) {
      const { args } = await resolve(ctx, req.id);
      const page = await searchUserIdpLinks(deps.db, deps.cache, args.id, listWindow(req.query));
      const result = page.rows.map((l) => create(IDPLinkSchema, { idpId: l.idpId, userId: l.externalUserId, userName: l.displayName }));
      return create(SearchIDPLinksResponseSchema, { details: listDetails(page), result });
    },
  };
}
