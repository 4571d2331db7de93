import { dateOf } from "../domain/clock.js";
import type { EventStore } from "../eventstore/eventstore.js";
import { userUnlocked } from "../events/index.js";

/** The creator of the unlock that ends a temporary lockout: nobody did it, the time ran out. */
export const LOCKOUT_EXPIRY_CREATOR = "SYSTEM:lockout-expired";

/**
 * Ends the lock of a temporarily locked user whose time is up (`user.user.unlocked`, which also clears the
 * failure count), decided on fresh state under the user's lock so that concurrent sign-ins unlock once.
 * Returns whether the user was unlocked. The lock ends lazily, at the next sign-in, like signing keys rotate:
 * nothing needs a timer, and a user who never comes back stays locked in the projection, harmlessly.
 */
export async function endExpiredLockout(es: EventStore, a: { instanceId: string; userId: string; orgId: string; now?: Date }): Promise<boolean> {
  const now = a.now ?? dateOf(es.clock);
  const { result } = await es.execute(async (w) => {
    await w.lock(a.instanceId, "user", a.userId);
    const fresh = await w.tx.user.findUnique({ where: { id: a.userId }, select: { state: true } });
    if (fresh?.state !== "locked") return false;
    const lockout = await w.tx.temporaryLockout.findUnique({ where: { userId: a.userId } });
    if (!lockout || lockout.until > now) return false;
    await w.push(a.instanceId, LOCKOUT_EXPIRY_CREATOR, [userUnlocked.event({ aggregateId: a.userId, resourceOwner: a.orgId })]);
    return true;
  });
  return result;
}
