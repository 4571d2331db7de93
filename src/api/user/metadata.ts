import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import {
  ListUserMetadataResponseSchema,
  type ListUserMetadataRequest,
  RemoveUserMetadataResponseSchema,
  type RemoveUserMetadataRequest,
  SetUserMetadataResponseSchema,
  type SetUserMetadataRequest,
  UserMetadataEntrySchema,
} from "../../../gen/svc/resources/user/v3alpha/user_service_pb.js";
import type { ChangeDetails } from "../../command/aggregate.js";
import { removeUserMetadata, setUserMetadata } from "../../command/user-metadata.js";
import { userMetadataOf } from "../../query/user-metadata.js";
import type { toResourceDetails } from "../convert.js";
import type { UserDeps } from "./service.js";

type Resolved = { args: { instanceId: string; id: string; creator: string } };

/** The user API's metadata (key -> bytes): set, list, remove (src/command/user-metadata.ts has the rules). */
export function metadataHandlers(
  deps: UserDeps,
  resolve: (ctx: HandlerContext, id: string) => Promise<Resolved>,
  details: (d: ChangeDetails) => ReturnType<typeof toResourceDetails>,
) {
  return {
    async setUserMetadata(req: SetUserMetadataRequest, ctx: HandlerContext) {
      const { args } = await resolve(ctx, req.id);
      const entries = req.metadata.map((m) => ({ key: m.key, value: m.value }));
      const d = await setUserMetadata(deps.es, { instanceId: args.instanceId, userId: args.id, creator: args.creator, entries });
      return create(SetUserMetadataResponseSchema, { details: details(d) });
    },
    async listUserMetadata(req: ListUserMetadataRequest, ctx: HandlerContext) {
      const { args } = await resolve(ctx, req.id);
      const rows = await userMetadataOf(deps.db, args.id);
      return create(ListUserMetadataResponseSchema, { metadata: rows.map((r) => create(UserMetadataEntrySchema, { key: r.key, value: r.value })) });
    },
    async removeUserMetadata(req: RemoveUserMetadataRequest, ctx: HandlerContext) {
      const { args } = await resolve(ctx, req.id);
      const d = await removeUserMetadata(deps.es, { instanceId: args.instanceId, userId: args.id, creator: args.creator, key: req.key });
      return create(RemoveUserMetadataResponseSchema, { details: details(d) });
    },
  };
}
