import type { Event, Prisma as P } from "../../gen/prisma/client.js";
import { type Clock, systemClock } from "../domain/clock.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { projectionState, type ListWindow, type SearchPage } from "./list.js";

/** Counting a long log costs more than a page: the total is exact up to this many. */
export const AUDIT_COUNT_CAP = 10_000;

type Where = P.EventWhereInput;

/** What the audit log filters by: `fromPosition` is exclusive, `creationDate` inclusive at both ends. */
export type EventFilter =
  | { case: "aggregateTypes"; value: string[] }
  | { case: "aggregateId"; value: string }
  | { case: "eventTypes"; value: string[] }
  | { case: "editorUserId"; value: string }
  | { case: "creationDate"; value: { since?: Date | undefined; until?: Date | undefined } }
  | { case: "fromPosition"; value: bigint }
  | { case: "resourceOwner"; value: string };

function whereOf(c: EventFilter): Where {
  switch (c.case) {
    case "aggregateTypes":
      return { aggregateType: { in: c.value } };
    case "aggregateId":
      return { aggregateId: c.value };
    case "eventTypes":
      return { type: { in: c.value } };
    case "editorUserId":
      return { creator: c.value };
    case "creationDate":
      return {
        createdAt: { ...(c.value.since ? { gte: c.value.since } : {}), ...(c.value.until ? { lte: c.value.until } : {}) },
      };
    case "fromPosition":
      return { position: { gt: c.value } };
    case "resourceOwner":
      return { resourceOwner: c.value };
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
    /** The time the retention counts back from. */
    private readonly clock: Clock = systemClock,
  ) {}

  async search(instance: { id: string; auditLogRetentionS: number | null }, filters: EventFilter[], window: ListWindow): Promise<SearchPage<Event>> {
    const retained: Where = instance.auditLogRetentionS ? { createdAt: { gte: new Date(this.clock.now() - instance.auditLogRetentionS * 1000) } } : {};
    const where: Where = { AND: [{ instanceId: instance.id }, retained, ...filters.map(whereOf)] };
    // Never cached: the retention's cutoff moves with the clock, and every event of the instance changes the total.
    const { skip, take, order } = window;
    const [rows, counted, state] = await Promise.all([
      this.db.reads.prisma.event.findMany({ where, orderBy: { position: order }, skip, take }),
      this.db.reads.prisma.event.findMany({ where, select: { position: true }, take: AUDIT_COUNT_CAP }),
      projectionState(this.db, this.cache),
    ]);
    return { rows, skip, take, total: counted.length, state };
  }
}
