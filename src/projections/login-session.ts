import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";
import { usersOfOrg } from "./related.js";

/** The login UI's browser sessions and the sessions API's sessions. */
export const loginSessions = defineProjection("loginSession", 2, (on) => {
  on(events.sessionAdded, async (tx, e) => {
    await tx.loginSession.create({
      data: {
        id: e.aggregateId,
        instanceId: e.instanceId,
        agentHash: e.payload.agentHash,
        userId: e.payload.userId,
        authTime: e.createdAt,
        amr: e.payload.amr ?? ["pwd"],
        factors: federated(e.payload.idpId),
        sequence: e.sequence,
        createdAt: e.createdAt,
        changeDate: e.createdAt,
      },
    });
  });
  on(events.sessionReauthenticated, async (tx, e) => {
    await tx.loginSession.update({
      where: { id: e.aggregateId },
      data: { authTime: e.createdAt, amr: e.payload.amr ?? ["pwd"], factors: federated(e.payload.idpId), sequence: e.sequence, changeDate: e.createdAt },
    });
  });
  on(events.sessionTerminated, async (tx, e) => {
    await tx.loginSession.deleteMany({ where: { id: e.aggregateId } });
  });
  on(events.apiSessionCreated, async (tx, e) => {
    const p = e.payload;
    await tx.loginSession.create({
      data: {
        id: e.aggregateId,
        instanceId: e.instanceId,
        // Unique per session: it has no browser; the browser's sessions are found by their agent's hash.
        agentHash: `api:${e.aggregateId}`,
        userId: p.userId,
        authTime: e.createdAt,
        amr: p.amr,
        tokenHash: p.tokenHash,
        factors: p.factors,
        expiresAt: p.expiresAt ? new Date(p.expiresAt) : null,
        sequence: e.sequence,
        createdAt: e.createdAt,
        changeDate: e.createdAt,
      },
    });
  });
  on(events.apiSessionChecked, async (tx, e) => {
    const p = e.payload;
    await tx.loginSession.update({
      where: { id: e.aggregateId },
      data: {
        amr: p.amr,
        factors: p.factors,
        expiresAt: p.expiresAt ? new Date(p.expiresAt) : null,
        ...(p.authenticated ? { authTime: e.createdAt } : {}),
        sequence: e.sequence,
        changeDate: e.createdAt,
      },
    });
  });
  on(events.userRemoved, async (tx, e) => {
    await tx.loginSession.deleteMany({ where: { userId: { in: [e.aggregateId] } } });
  });
  // Reads the organisation's users: before users.
  on(events.orgRemoved, async (tx, e) => {
    await tx.loginSession.deleteMany({ where: { userId: { in: await usersOfOrg(tx, e.aggregateId) } } });
  });
});

/** A browser session's factors: which provider its last sign-in went through, if one did. */
const federated = (idpId: string | undefined): { federated?: { idpId: string } } => (idpId ? { federated: { idpId } } : {});
