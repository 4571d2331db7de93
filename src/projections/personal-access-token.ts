import { orgRemoved, patAdded, patRemoved, userRemoved } from "../events/index.js";
import { credentialRow, defineProjection } from "./projection.js";
import { usersOfOrg } from "./related.js";

/** Personal access tokens: only the token's hash is stored. */
export const personalAccessTokens = defineProjection("personalAccessToken", 1, (on) => {
  on(patAdded, async (tx, e) => {
    await tx.personalAccessToken.create({ data: { ...credentialRow(e, e.payload.tokenId), userId: e.aggregateId, tokenHash: e.payload.tokenHash } });
  });
  on(patRemoved, async (tx, e) => {
    await tx.personalAccessToken.deleteMany({ where: { id: e.payload.tokenId, userId: e.aggregateId } });
  });
  on(userRemoved, async (tx, e) => {
    await tx.personalAccessToken.deleteMany({ where: { userId: { in: [e.aggregateId] } } });
  });
  // Reads the organisation's users: before users.
  on(orgRemoved, async (tx, e) => {
    await tx.personalAccessToken.deleteMany({ where: { userId: { in: await usersOfOrg(tx, e.aggregateId) } } });
  });
});
