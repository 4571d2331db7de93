import type { BrandingAsset } from "../../gen/prisma/client.js";
import type { Database } from "../storage/database.js";

export type BrandingAssetRow = BrandingAsset;

/**
 * A branding file of the instance (logo, icon, font), by its content's SHA-256: what the login UI serves at
 * /ui/login/assets/<sha256>. Not cached: files are large, and the browser keeps each for a year.
 */
export function brandingAsset(db: Database, instanceId: string, sha256: string): Promise<BrandingAssetRow | null> {
  return db.reads.prisma.brandingAsset.findUnique({ where: { instanceId_sha256: { instanceId, sha256 } } });
}
