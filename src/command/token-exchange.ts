import type { EventStore } from "../eventstore/eventstore.js";
import { newId } from "../ids.js";
import { refreshTokenAdded, userImpersonated, type ActorClaim, type RefreshGrant, type RefreshRotation } from "../events/index.js";

/**
 * What a token exchange (RFC 8693) writes, in one transaction: the refresh token it issued (with `offline_access`),
 * and, when someone acts for the user, `user.impersonated` on the user. Access and ID tokens are not stored (they
 * are sealed or signed). Returns the refresh token's ID.
 */
export async function recordTokenExchange(
  es: EventStore,
  a: {
    instanceId: string;
    /** The actor's user ID when someone acts for the user, else the client ID. */
    creator: string;
    refresh?: { resourceOwner: string; rotation: RefreshRotation; grant: RefreshGrant };
    impersonation?: { userId: string; orgId: string; act: ActorClaim; clientId: string };
  },
): Promise<string | undefined> {
  if (!a.refresh && !a.impersonation) return undefined;
  const refreshId = a.refresh ? newId() : undefined;
  await es.execute(async (w) => {
    // Impersonations of one user queue on the user's lock rather than race for its next sequence (which would
    // rerun them, and after 8 conflicts refuse them).
    if (a.impersonation) await w.sequenceOf(a.instanceId, "user", a.impersonation.userId);
    await w.push(a.instanceId, a.creator, [
      ...(a.refresh
        ? [refreshTokenAdded.event({ aggregateId: refreshId!, resourceOwner: a.refresh.resourceOwner }, { ...a.refresh.rotation, ...a.refresh.grant })]
        : []),
      ...(a.impersonation
        ? [
            userImpersonated.event(
              { aggregateId: a.impersonation.userId, resourceOwner: a.impersonation.orgId },
              { act: a.impersonation.act, clientId: a.impersonation.clientId },
            ),
          ]
        : []),
    ]);
  });
  return refreshId;
}
