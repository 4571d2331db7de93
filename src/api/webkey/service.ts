import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  ListWebKeysResponseSchema,
  RotateWebKeyResponseSchema,
  type WebKeyService,
  WebKeySchema,
} from "../../../gen/svc/resources/webkey/v3alpha/webkey_service_pb.js";
import { callInfo } from "../../authz/context.js";
import { rotateSigningKey, type SigningKeyPolicy } from "../../command/signing-keys.js";
import type { Clock } from "../../domain/clock.js";
import type { EventStore } from "../../eventstore/eventstore.js";
import type { SigningKeyQueries } from "../../query/signing-keys.js";

export function webKeyService(deps: { es: EventStore; keys: SigningKeyQueries; keyPolicy: SigningKeyPolicy; clock: Clock }): ServiceImpl<typeof WebKeyService> {
  return {
    async listWebKeys(_req, ctx) {
      const instanceId = callInfo(ctx).target.instance.id;
      const keys = await deps.keys.listed(instanceId);
      const now = deps.clock.now();
      return create(ListWebKeysResponseSchema, {
        result: keys.map((k, i) =>
          create(WebKeySchema, {
            id: k.id,
            algorithm: k.algorithm,
            signing: i === 0 && k.useUntil.getTime() > now,
            creationDate: timestampFromDate(k.createdAt),
            useUntil: timestampFromDate(k.useUntil),
            publishUntil: timestampFromDate(k.publishUntil),
          }),
        ),
      });
    },
    async rotateWebKey(_req, ctx) {
      const instanceId = callInfo(ctx).target.instance.id;
      return create(RotateWebKeyResponseSchema, { id: await rotateSigningKey(deps.es, deps.keyPolicy, instanceId) });
    },
  };
}
