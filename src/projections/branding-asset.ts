import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";

/** Uploaded branding files, by their SHA-256. */
export const brandingAssets = defineProjection("brandingAsset", 1, (on) => {
  on(events.brandingAssetAdded, async (tx, e) => {
    await tx.brandingAsset.create({
      data: {
        instanceId: e.instanceId,
        sha256: e.aggregateId,
        contentType: e.payload.contentType,
        data: Buffer.from(e.payload.data, "base64"),
        createdAt: e.createdAt,
      },
    });
  });
});
