import { isUniqueViolation } from "../errors/errors.js";
import type { Database } from "../storage/database.js";

/**
 * JWT IDs of client assertions and JWT profile grants, remembered until the JWT expires. A unique key makes the
 * first use win even when two arrive at once; the second is refused.
 */
export class ReplayGuard {
  constructor(private readonly db: Database) {}

  async use(key: string, expSeconds: number, refused: () => Error): Promise<void> {
    if (key.endsWith(":")) throw refused();
    try {
      await this.db.prisma.usedJwtId.create({ data: { key, expiresAt: new Date(expSeconds * 1000) } });
    } catch (e) {
      if (isUniqueViolation(e)) throw refused();
      throw e;
    }
    // Old entries are of no use once their JWTs expired; an occasional sweep keeps the table small.
    if (Math.random() < 0.01) await this.db.prisma.usedJwtId.deleteMany({ where: { expiresAt: { lt: new Date() } } });
  }
}
