import type { Database } from "../storage/database.js";

/** A failed delivery of an event (`command/event-deliveries.ts`) whose next attempt is due. */
export interface DueDelivery {
  /** The event's position in the log. */
  position: bigint;
  /** Attempts made so far. */
  attempts: number;
}

/** At most `limit` failed deliveries due for another attempt, oldest event first. */
export function dueDeliveries(db: Database, limit: number, now = new Date()): Promise<DueDelivery[]> {
  return db.prisma.eventDelivery.findMany({
    where: { nextAttemptAt: { lte: now } },
    orderBy: { position: "asc" },
    take: limit,
    select: { position: true, attempts: true },
  });
}
