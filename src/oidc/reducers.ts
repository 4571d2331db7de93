import { EventTypes } from "../command/events.js";
import type { EventStore } from "../eventstore/eventstore.js";
import { registerSigningKeyReducers } from "./keys.js";
import { registerTokenReducers } from "./tokens.js";

/** Projections of the OIDC provider: keys, authorization requests, refresh tokens, revocations. */
export function registerOidcReducers(es: EventStore): void {
  registerSigningKeyReducers(es);
  registerTokenReducers(es);

  es.on(EventTypes.authRequestAdded, async (tx, e) => {
    const p = e.payload as { clientId: string; request: object; expiresAt: string };
    await tx.authRequest.create({
      data: { id: e.aggregateId, instanceId: e.instanceId, clientId: p.clientId, request: p.request, state: "pending", createdAt: e.createdAt, expiresAt: new Date(p.expiresAt) },
    });
  });
  es.on(EventTypes.authRequestSucceeded, async (tx, e) => {
    const p = e.payload as { userId: string; sessionId: string; authTime: string; codeHash: string | null; expiresAt: string };
    await tx.authRequest.update({
      where: { id: e.aggregateId },
      data: { state: "succeeded", userId: p.userId, sessionId: p.sessionId, authTime: new Date(p.authTime), codeHash: p.codeHash, expiresAt: new Date(p.expiresAt) },
    });
  });
  es.on(EventTypes.authRequestCodeExchanged, async (tx, e) => {
    await tx.authRequest.update({ where: { id: e.aggregateId }, data: { state: "exchanged" } });
  });
  es.on(EventTypes.authRequestTokensIssued, async (tx, e) => {
    await tx.authRequest.update({ where: { id: e.aggregateId }, data: { issued: e.payload.issued as object } });
  });

  es.on(EventTypes.refreshTokenAdded, async (tx, e) => {
    const p = e.payload as Record<string, unknown>;
    await tx.refreshToken.create({
      data: {
        id: e.aggregateId,
        instanceId: e.instanceId,
        tokenHash: String(p.tokenHash),
        previousHashes: [],
        clientId: String(p.clientId),
        applicationId: String(p.applicationId),
        userId: String(p.userId),
        scopes: p.scopes as string[],
        audience: p.audience as string[],
        sessionId: (p.sessionId as string | null) ?? null,
        authTime: new Date(String(p.authTime)),
        amr: p.amr as string[],
        accessJti: String(p.accessJti),
        accessExpires: new Date(String(p.accessExpires)),
        idleExpiresAt: new Date(String(p.idleExpiresAt)),
        expiresAt: new Date(String(p.expiresAt)),
        createdAt: e.createdAt,
      },
    });
  });
  es.on(EventTypes.refreshTokenRenewed, async (tx, e) => {
    const p = e.payload as { tokenHash: string; accessJti: string; accessExpires: string; idleExpiresAt: string };
    const row = await tx.refreshToken.findUniqueOrThrow({ where: { id: e.aggregateId } });
    await tx.refreshToken.update({
      where: { id: e.aggregateId },
      data: {
        tokenHash: p.tokenHash,
        // The replaced token is remembered: using it again is reuse, and revokes the grant.
        previousHashes: [...row.previousHashes, row.tokenHash],
        accessJti: p.accessJti,
        accessExpires: new Date(p.accessExpires),
        idleExpiresAt: new Date(p.idleExpiresAt),
      },
    });
  });
  es.on(EventTypes.refreshTokenRevoked, async (tx, e) => {
    await tx.refreshToken.update({ where: { id: e.aggregateId }, data: { revoked: true } });
  });
}
