import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type EventService,
  EventSchema,
  ListEventTypesResponseSchema,
  SearchEventsResponseSchema,
} from "../../../gen/svc/resources/event/v3alpha/event_service_pb.js";
import { callInfo } from "../../authz/context.js";
import { allEventDefinitions, allEventTypes } from "../../command/events.js";
import { redactPayload } from "../../domain/redaction.js";
import type { AuditLog } from "../../query/audit-log.js";
import type { JsonObject } from "@bufbuild/protobuf";

const aggregateTypes = [...new Set(allEventDefinitions.map((d) => d.aggregateType))].sort();

/** The audit log (proto svc.resources.event.v3alpha): the caller's instance's events, redacted. */
export function eventService(deps: { auditLog: AuditLog }): ServiceImpl<typeof EventService> {
  return {
    async searchEvents(req, ctx) {
      const { target } = callInfo(ctx);
      const { rows, details } = await deps.auditLog.search(target.instance, req);
      const result = rows.map((e) =>
        create(EventSchema, {
          position: BigInt(e.position),
          type: e.type,
          aggregateType: e.aggregateType,
          aggregateId: e.aggregateId,
          sequence: BigInt(e.sequence),
          resourceOwner: e.resourceOwner,
          editorUserId: e.creator,
          creationDate: timestampFromDate(e.createdAt),
          payload: redactPayload(e.payload ?? {}) as JsonObject,
        }),
      );
      return create(SearchEventsResponseSchema, { details, result });
    },
    async listEventTypes() {
      return create(ListEventTypesResponseSchema, { eventTypes: allEventTypes, aggregateTypes });
    },
  };
}
