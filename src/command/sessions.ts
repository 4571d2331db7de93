import type { EventStore } from "../eventstore/eventstore.js";
import { newId } from "../ids.js";
import type { SessionQueries } from "../query/sessions.js";
import { sessionAdded, sessionReauthenticated, sessionTerminated } from "../events/index.js";

/**
 * Browser sessions: one per account a browser signed in with. Signing in again with the same account refreshes
 * the auth time of its live session instead of adding a second one; a session that has ended (its idle or
 * absolute lifetime) is ended for good and a new one begins: reviving it would revive the tokens bound to it.
 * `amr`: the methods the user proved (OIDC amr), a password alone by default.
 */
export async function signIn(
  es: EventStore,
  sessions: SessionQueries,
  a: { instanceId: string; agentHash: string; userId: string; orgId: string; amr?: string[]; idpId?: string },
): Promise<string> {
  const amr = a.amr ?? ["pwd"];
  const { result } = await es.execute(async (w) => {
    const existing = await w.tx.loginSession.findUnique({ where: { agentHash_userId: { agentHash: a.agentHash, userId: a.userId } } });
    if (existing && (await sessions.active(existing.id))) {
      await w.push(a.instanceId, a.userId, [
        sessionReauthenticated.event({ aggregateId: existing.id, resourceOwner: a.orgId }, { amr, ...(a.idpId ? { idpId: a.idpId } : {}) }),
      ]);
      return existing.id;
    }
    const id = newId();
    await w.push(a.instanceId, a.userId, [
      ...(existing ? [sessionTerminated.event({ aggregateId: existing.id, resourceOwner: "" })] : []),
      sessionAdded.event(
        { aggregateId: id, resourceOwner: a.orgId },
        { agentHash: a.agentHash, userId: a.userId, amr, ...(a.idpId ? { idpId: a.idpId } : {}) },
      ),
    ]);
    return id;
  });
  return result;
}

/** Ends every session of a browser (logout), or only those of one user when given. */
export async function terminateSessions(es: EventStore, a: { instanceId: string; agentHash: string; userId?: string; creator: string }): Promise<number> {
  const { result } = await es.execute(async (w) => {
    const sessions = await w.tx.loginSession.findMany({
      where: { instanceId: a.instanceId, agentHash: a.agentHash, ...(a.userId ? { userId: a.userId } : {}) },
    });
    if (!sessions.length) return 0;
    await w.push(
      a.instanceId,
      a.creator,
      sessions.map((s) => sessionTerminated.event({ aggregateId: s.id, resourceOwner: "" })),
    );
    return sessions.length;
  });
  return result;
}

/**
 * Whether the session may be used now; a use of a browser session is recorded, and its idle lifetime starts
 * again (token checks, the refresh grant and browser SSO use sessions). The last use is a column of the
 * session's row written at most every minute (`SessionQueries.standing` says when), and not as an event: an
 * event per use would grow the log for ever with every token check, for a value worth nothing once the session
 * has ended. Noted in the cache first, so that uses arriving meanwhile do not write too.
 */
export async function useSession(es: EventStore, sessions: SessionQueries, sessionId: string): Promise<boolean> {
  const now = es.clock.now();
  const { alive, recordUse } = await sessions.standing(sessionId, now);
  if (alive && recordUse) {
    await sessions.used(sessionId, now);
    await es.execute((w) => w.tx.loginSession.updateMany({ where: { id: sessionId }, data: { usedAt: new Date(now) } }));
  }
  return alive;
}
