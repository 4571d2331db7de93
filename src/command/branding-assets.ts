import { createHash } from "node:crypto";
import { type AssetKind, assetMaxBytes, assetTypeOf } from "../domain/branding.js";
import { errors } from "../errors/errors.js";
import type { EventStore } from "../eventstore/eventstore.js";
import { brandingAssetAdded } from "../events/index.js";

/**
 * Branding files by content: the same file uploaded twice is one asset. The bytes travel in the event, so that
 * the projection can be rebuilt from the log like every other.
 */
export async function addBrandingAsset(es: EventStore, a: { instanceId: string; creator: string; kind: AssetKind; data: Uint8Array }) {
  // "the icon_dark", not "a icon_dark": the kind as the request named it
  if (a.data.length > assetMaxBytes[a.kind])
    throw errors.invalidArgument("BRAND-s1ze", `invalid data: the ${a.kind} may have at most ${assetMaxBytes[a.kind] / 1024} KiB`);
  const contentType = assetTypeOf(a.kind, a.data);
  if (!contentType) {
    const allowed = a.kind === "font" ? "a WOFF2, WOFF, TrueType or OpenType font" : "a PNG, JPEG or GIF image";
    throw errors.invalidArgument("BRAND-typ3", `invalid data: the ${a.kind} must be ${allowed}`);
  }
  const sha256 = createHash("sha256").update(a.data).digest("hex");
  await es.execute(async (w) => {
    await w.lock(a.instanceId, "branding_asset", sha256);
    const there = await w.tx.brandingAsset.findUnique({ where: { instanceId_sha256: { instanceId: a.instanceId, sha256 } }, select: { sha256: true } });
    if (there) return;
    await w.push(a.instanceId, a.creator, [
      brandingAssetAdded.event({ aggregateId: sha256, resourceOwner: a.instanceId }, { contentType, data: Buffer.from(a.data).toString("base64") }),
    ]);
  });
  return { sha256, contentType };
}
