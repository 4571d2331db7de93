import type { Database } from "../storage/database.js";

/**
 * Messages waiting for a provider (src/notification/worker.ts): a message whose channel has no provider is not
 * retried with back-off, and its attempts are not spent. It stays pending, marked by its last error, with its next
 * attempt at its expiry; a provider configured for its instance (or a default at the next start) makes it due at once.
 */
export const WAITING_FOR_PROVIDER = "waiting for a provider: ";

/**
 * Makes the waiting messages of an instance's channel (all instances: undefined) due now; how many. Those already
 * due are matched too: one of them may be under an attempt that found no provider before this one was configured.
 * Its row is locked, so this waits for that attempt's record (its expiry as next attempt) and then makes it due;
 * skipping due rows would leave such a message waiting until it expires.
 */
export async function wakeWaitingMessages(db: Database, now: Date, channel: "mail" | "sms", instanceId?: string): Promise<number> {
  const r = await db.prisma.notificationMessage.updateMany({
    where: { status: "pending", channel, lastError: { startsWith: WAITING_FOR_PROVIDER }, ...(instanceId ? { instanceId } : {}) },
    data: { nextAttemptAt: now },
  });
  return r.count;
}
