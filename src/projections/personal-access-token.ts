import * as events from "../events/index.js";
import { credentialRow, defineProjection } from "./projection.js";
import { usersOfOrg } from "./related.js";

/** Personal access tokens: only the token's hash is stored. */
export const personalAccessTokens = defineProjection("personalAccessToken", 1, (on) => {
  on(events.patAdded, async (tx, e) => {
    await tx.personalAccessToken.create({ data: { ...credentialRow(e, e.payload.tokenId), userId: e.aggregateId, tokenHash: e.payload.tokenHash } });
  });
  on(events.patRemoved, async (tx, e) => {
    await tx.personalAccessToken.deleteMany({ where: { id: e.payload.tokenId, userId: e.aggregateId } });
  });
  on(events.userRemoved, async (tx, e) => {
    await tx.personalAccessToken.deleteMany({ where: { userId: { in: [e.aggregateId] } } });
  });
  // Reads the organisation's users: before users.
  on(events.orgRemoved, async (tx, e) => {
    await tx.personalAccessToken.deleteMany({ where: { userId: { in: await usersOfOrg(tx, e.aggregateId) } } });
  });
});
