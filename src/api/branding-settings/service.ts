import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  ActivateBrandingResponseSchema,
  type BrandingSettingsService,
  ResolveBrandingResponseSchema,
  ResolvedBrandingSchema,
  SetBrandingResponseSchema,
  SetBrandingSchema,
  UploadBrandingAssetResponseSchema,
} from "../../../gen/svc/settings/branding/v3alpha/branding_service_pb.js";
import { callInfo } from "../../authz/context.js";
import { addBrandingAsset } from "../../command/branding-assets.js";
import { changeSettings } from "../../command/settings.js";
import type { AssetKind } from "../../domain/branding.js";
import { ownerOf, type ContextOwner } from "../../domain/contexts.js";
import type { EventStore } from "../../eventstore/eventstore.js";
import { storedValuesOf, type SettingsQueries } from "../../query/settings.js";
import type { Database } from "../../storage/database.js";
import { toSettingsDetails } from "../convert.js";
import { assertMatches, carriedBy, resolveSettings, setProperties, setSettings } from "../settings-properties.js";

/**
 * Branding: the API writes the preview (kind `branding_preview`); activation copies the context's own preview
 * values into the branding in force (kind `branding`), resetting there what the preview does not set, so the
 * context then inherits it like the preview does.
 */
export function brandingSettingsService(deps: { es: EventStore; db: Database; settings: SettingsQueries }): ServiceImpl<typeof BrandingSettingsService> {
  const { es, db, settings } = deps;
  for (const kind of ["branding", "branding_preview"] as const) {
    assertMatches(kind, SetBrandingSchema, carriedBy("set"), { settable: true });
    assertMatches(kind, ResolvedBrandingSchema, carriedBy("value"));
  }
  // Read from the table, not the cache: activation must copy what the last SetBranding stored.
  const ownValues = (kind: "branding" | "branding_preview", owner: ContextOwner) => storedValuesOf(db, kind, owner);
  return {
    async setBranding(req, ctx) {
      return create(SetBrandingResponseSchema, { details: await setProperties(ctx, es, "branding_preview", SetBrandingSchema, req.settings!) });
    },
    async activateBranding(_req, ctx) {
      const { target, caller } = callInfo(ctx);
      const owner = ownerOf(target);
      const [preview, active] = await Promise.all([ownValues("branding_preview", owner), ownValues("branding", owner)]);
      const change = { set: preview, reset: Object.keys(active).filter((k) => !(k in preview)) };
      const details = await changeSettings(es, { kind: "branding", instanceId: target.instance.id, owner, creator: caller.userId, change });
      return create(ActivateBrandingResponseSchema, { details: toSettingsDetails(details) });
    },
    async uploadBrandingAsset(req, ctx) {
      const { target, caller } = callInfo(ctx);
      const kind = req.kind as AssetKind;
      const { sha256, contentType } = await addBrandingAsset(es, { instanceId: target.instance.id, creator: caller.userId, kind, data: req.data });
      const details = await setSettings(ctx, es, "branding_preview", { [kind]: { set: sha256 } }, () => `kind`);
      return create(UploadBrandingAssetResponseSchema, { details, sha256, contentType });
    },
    async resolveBranding(req, ctx) {
      return create(ResolveBrandingResponseSchema, await resolveSettings(ctx, settings, req.preview ? "branding_preview" : "branding", ResolvedBrandingSchema));
    },
  };
}
