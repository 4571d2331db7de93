import {
  authRequestAdded,
  authRequestCodeExchanged,
  authRequestSucceeded,
  authRequestTokensIssued,
  refreshTokenAdded,
  refreshTokenRenewed,
  refreshTokenRevoked,
} from "../command/events.js";
import type { EventStore } from "../eventstore/eventstore.js";
import { registerSigningKeyReducers } from "./keys.js";
import { registerTokenReducers } from "./tokens.js";

/** Projections of the OIDC provider: keys, authorization requests, refresh tokens, revocations. */
export function registerOidcReducers(es: EventStore): void {
  registerSigningKeyReducers(es);
  registerTokenReducers(es);

  es.on(authRequestAdded, async (tx, e) => {
    const p = e.payload;
    await tx.authRequest.create({
      data: { id: e.aggregateId, instanceId: e.instanceId, clientId: p.clientId, request: p.request, state: "pending", createdAt: e.createdAt, expiresAt: new Date(p.expiresAt) },
    });
  });
  es.on(authRequestSucceeded, async (tx, e) => {
    const p = e.payload;
    await tx.authRequest.update({
      where: { id: e.aggregateId },
      data: { state: "succeeded", userId: p.userId, sessionId: p.sessionId, authTime: new Date(p.authTime), codeHash: p.codeHash, expiresAt: new Date(p.expiresAt) },
    });
  });
  es.on(authRequestCodeExchanged, async (tx, e) => {
    await tx.authRequest.update({ where: { id: e.aggregateId }, data: { state: "exchanged" } });
  });
  es.on(authRequestTokensIssued, async (tx, e) => {
    await tx.authRequest.update({ where: { id: e.aggregateId }, data: { issued: e.payload.issued } });
  });

  es.on(refreshTokenAdded, async (tx, e) => {
    const p = e.payload;
    await tx.refreshToken.create({
      data: {
        id: e.aggregateId,
        instanceId: e.instanceId,
        tokenHash: p.tokenHash,
        previousHashes: [],
        clientId: p.clientId,
        applicationId: p.applicationId,
        userId: p.userId,
        scopes: p.scopes,
        audience: p.audience,
        sessionId: p.sessionId,
        authTime: new Date(p.authTime),
        amr: p.amr,
        accessJti: p.accessJti,
        accessExpires: new Date(p.accessExpires),
        idleExpiresAt: new Date(p.idleExpiresAt),
        expiresAt: new Date(p.expiresAt),
        createdAt: e.createdAt,
      },
    });
  });
  es.on(refreshTokenRenewed, async (tx, e) => {
    const p = e.payload;
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
  es.on(refreshTokenRevoked, async (tx, e) => {
    await tx.refreshToken.update({ where: { id: e.aggregateId }, data: { revoked: true } });
  });
}
