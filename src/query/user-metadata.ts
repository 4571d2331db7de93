import type { Database } from "../storage/database.js";

/**
 * The user's metadata, by key, read fresh: the user API answers with what was just set, also when another
 * process set it (UserQueries.metadataOf is the cached read the token claims make).
 */
export function userMetadataOf(db: Database, userId: string): Promise<{ key: string; value: Uint8Array }[]> {
  return db.reads.prisma.userMetadata.findMany({ where: { userId }, orderBy: { key: "asc" }, select: { key: true, value: true } });
}
