import type { RefreshToken, RefreshTokenGrace } from "../../gen/prisma/client.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { readRow } from "./sources.js";

export type RefreshTokenRow = RefreshToken;
export type RefreshGraceRow = RefreshTokenGrace;

/**
 * The sealed answer a retry of a refresh gets: the token presented is the one the latest rotation replaced,
 * the token that replaced it is still current (once that one was used, the client evidently had it, and the
 * old one is plain reuse), the window is open and the grant not revoked. Otherwise undefined.
 */
export function graceAnswer(grace: RefreshGraceRow | null, row: RefreshTokenRow, presentedHash: string, now = Date.now()): string | undefined {
  if (!grace || row.revoked || grace.refreshTokenId !== row.id) return undefined;
  if (grace.presentedHash !== presentedHash || grace.successorHash !== row.tokenHash || grace.expiresAt.getTime() <= now) return undefined;
  return grace.response;
}

/**
 * Reads of the OIDC provider's refresh tokens (by the SHA-256 of the token) and access token revocations. Refresh
 * tokens are read on the primary (each use decides a rotation or a reuse); revocations where reads may go.
 */
export class TokenQueries {
  constructor(
    private readonly db: Database,
    private readonly cache: ProjectionCache,
  ) {}

  /** The refresh token whose current token has this hash, in the instance. */
  async refreshByHash(instanceId: string, tokenHash: string): Promise<RefreshTokenRow | null> {
    const row = await this.db.prisma.refreshToken.findUnique({ where: { tokenHash } });
    return row?.instanceId === instanceId ? row : null;
  }

  /** The refresh token that once had this hash and was rotated since: a use of it is reuse. */
  refreshReplacing(instanceId: string, tokenHash: string): Promise<RefreshTokenRow | null> {
    return this.db.prisma.refreshToken.findFirst({ where: { instanceId, previousHashes: { has: tokenHash } } });
  }

  /** The grace of a refresh token's latest rotation, if any; read fresh (never cached), since it lasts seconds. */
  refreshGrace(refreshTokenId: string): Promise<RefreshGraceRow | null> {
    return this.db.prisma.refreshTokenGrace.findUnique({ where: { refreshTokenId } });
  }

  /** Whether the access token with this ID was revoked; every token check asks, so it is cached. */
  isRevoked(jti: string): Promise<boolean> {
    return this.cache.get(
      `revoked:${jti}`,
      async () => !!(await this.db.reads.prisma.revokedToken.findUnique({ where: { jti } })),
      readRow("revokedToken", jti),
    );
  }
}
