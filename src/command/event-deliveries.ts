import type { Database } from "../storage/database.js";

/** A failed delivery of an event to its execution's targets, and when to try it again. */
export interface FailedDelivery {
  /** The event's position in the log. */
  position: bigint;
  /** Attempts made so far. */
  attempts: number;
  nextAttemptAt: Date;
  lastError: string;
}

/** Records a failed delivery, or the next failure of one already recorded, for a later attempt. */
export async function scheduleDeliveryRetry(db: Database, d: FailedDelivery): Promise<void> {
  const { position, ...retry } = d;
  await db.prisma.eventDelivery.upsert({ where: { position }, create: d, update: retry });
}

/** Forgets the event's failed delivery: a later attempt succeeded, or it was given up. Nothing recorded, nothing done. */
export async function forgetDelivery(db: Database, position: bigint): Promise<void> {
  await db.prisma.eventDelivery.deleteMany({ where: { position } });
}
