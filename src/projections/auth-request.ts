import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";

/** The OIDC provider's authorization requests, from authorize to the code's exchange. */
export const authRequests = defineProjection("authRequest", 1, (on) => {
  on(events.authRequestAdded, async (tx, e) => {
    const p = e.payload;
    // The pending row is there already (written at authorize, without an event), unless the log is replayed or
    // was written before security review #22, when this event came at authorize; then it is added here.
    await tx.authRequest.upsert({
      where: { id: e.aggregateId },
      create: {
        id: e.aggregateId,
        instanceId: e.instanceId,
        clientId: p.clientId,
        request: p.request,
        state: "pending",
        createdAt: e.createdAt,
        expiresAt: new Date(p.expiresAt),
      },
      update: {},
    });
  });
  on(events.authRequestSucceeded, async (tx, e) => {
    const p = e.payload;
    // The methods the user proved go with the stored request, where the code grant reads them (`amr`).
    const row = p.amr ? await tx.authRequest.findUnique({ where: { id: e.aggregateId }, select: { request: true } }) : null;
    await tx.authRequest.update({
      where: { id: e.aggregateId },
      data: {
        ...(row && p.amr ? { request: { ...(row.request as object), amr: p.amr } } : {}),
        state: "succeeded",
        userId: p.userId,
        sessionId: p.sessionId,
        authTime: new Date(p.authTime),
        codeHash: p.codeHash,
        expiresAt: new Date(p.expiresAt),
      },
    });
  });
  on(events.authRequestCodeExchanged, async (tx, e) => {
    await tx.authRequest.update({ where: { id: e.aggregateId }, data: { state: "exchanged" } });
  });
  on(events.authRequestTokensIssued, async (tx, e) => {
    await tx.authRequest.update({ where: { id: e.aggregateId }, data: { issued: e.payload.issued } });
  });
});
