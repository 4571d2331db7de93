import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Event, Prisma as P } from "../../gen/prisma/client.js";
import type { EventSearchFilter } from "../../gen/svc/resources/event/v3alpha/event_service_pb.js";
import type { ListDetails, ListQuery } from "../../gen/svc/resources/object/v3alpha/object_pb.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { listDetails, listWindow, projectionState } from "./list.js";

/** Counting a long log costs more than a page: the total is exact up to this many. */
export const AUDIT_COUNT_CAP = 10_000;

type Where = P.EventWhereInput;

function whereOf(f: EventSearchFilter): Where {
  const c = f.filter;
  switch (c.case) {
    case "aggregateTypes":
      return { aggregateType: { in: c.value.types } };
    case "aggregateId":
      return { aggregateId: c.value };
    case "eventTypes":
      return { type: { in: c.value.types } };
    case "editorUserId":
      return { creator: c.value };
    case "creationDate":
      return {
        createdAt: { ...(c.value.since ? { gte: timestampDate(c.value.since) } : {}), ...(c.value.until ? { lte: timestampDate(c.value.until) } : {}) },
      };
    case "fromPosition":
      return { position: { gt: c.value } };
    case "resourceOwner":
      return { resourceOwner: c.value };
    default:
      return {};
  }
}

/**
 * The audit log: events of one instance in commit order (position), filtered; none older than the instance's
 * retention. The index (instance_id, position) serves the order; the type filters use (type, position).
 */
export class AuditLog {
  constructor(
    private readonly db: Database,
    private readonly cache: ProjectionCache,
  ) {}

  async search(
    instance: { id: string; auditLogRetentionS: number | null },
    req: { filters: EventSearchFilter[]; query?: ListQuery | undefined },
  ): Promise<{ rows: Event[]; details: ListDetails }> {
    const retained: Where = instance.auditLogRetentionS ? { createdAt: { gte: new Date(Date.now() - instance.auditLogRetentionS * 1000) } } : {};
    const where: Where = { AND: [{ instanceId: instance.id }, retained, ...req.filters.map(whereOf)] };
    // Never cached: the retention's cutoff moves with the clock, and every event of the instance changes the total.
    const { skip, take, order } = listWindow(req.query);
    const [rows, counted, state] = await Promise.all([
      this.db.prisma.event.findMany({ where, orderBy: { position: order }, skip, take }),
      this.db.prisma.event.findMany({ where, select: { position: true }, take: AUDIT_COUNT_CAP }),
      projectionState(this.db, this.cache),
    ]);
    return { rows, details: listDetails({ take, skip, returned: rows.length, total: counted.length, state }) };
  }
}
