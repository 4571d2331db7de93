import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type EventSearchFilter,
  type EventService,
  EventSchema,
  ListEventTypesResponseSchema,
  SearchEventsResponseSchema,
} from "../../../gen/svc/resources/event/v3alpha/event_service_pb.js";
import { callInfo } from "../../authz/context.js";
import { allEventDefinitions, allEventTypes } from "../../events/index.js";
import { redactPayload } from "../../domain/redaction.js";
import type { AuditLog, EventFilter } from "../../query/audit-log.js";
import { criteriaOf, listDetails, listWindow, type SetFilter } from "../list.js";
import type { JsonObject } from "@bufbuild/protobuf";

const aggregateTypes = [...new Set(allEventDefinitions.map((d) => d.aggregateType))].sort();

function eventFilterOf(f: SetFilter<EventSearchFilter>): EventFilter {
  switch (f.case) {
    case "aggregateTypes":
    case "eventTypes":
      return { case: f.case, value: f.value.types };
    case "creationDate":
      return {
        case: "creationDate",
        value: { since: f.value.since && timestampDate(f.value.since), until: f.value.until && timestampDate(f.value.until) },
      };
    default:
      // The IDs, the editor, the position: as they are.
      return f;
  }
}

/** The audit log (proto svc.resources.event.v3alpha): the caller's instance's events, redacted. */
export function eventService(deps: { auditLog: AuditLog }): ServiceImpl<typeof EventService> {
  return {
    async searchEvents(req, ctx) {
      const { target } = callInfo(ctx);
      const page = await deps.auditLog.search(target.instance, criteriaOf(req.filters, eventFilterOf), listWindow(req.query));
      const result = page.rows.map((e) =>
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
      return create(SearchEventsResponseSchema, { details: listDetails(page), result });
    },
    async listEventTypes() {
      return create(ListEventTypesResponseSchema, { eventTypes: allEventTypes, aggregateTypes });
    },
  };
}
