import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type LoginSettingsService,
  ResolveLockoutSettingsResponseSchema,
  ResolveLoginSettingsResponseSchema,
  ResolvePasswordComplexitySettingsResponseSchema,
  ResolvedLockoutSettingsSchema,
  ResolvedLoginSettingsSchema,
  ResolvedPasswordComplexitySettingsSchema,
  SetLockoutSettingsResponseSchema,
  SetLockoutSettingsSchema,
  SetLoginSettingsResponseSchema,
  SetLoginSettingsSchema,
  SetPasswordComplexitySettingsResponseSchema,
  SetPasswordComplexitySettingsSchema,
} from "../../../gen/svc/settings/login/v3alpha/login_service_pb.js";
import type { EventStore } from "../../eventstore/eventstore.js";
import type { SettingsQueries } from "../../query/settings.js";
import { assertMatches, carriedBy, resolveSettings, setProperties } from "../settings-properties.js";

/** Login, password complexity and lockout settings: Set* and Resolved* messages of the kinds' properties. */
export function loginSettingsService(deps: { es: EventStore; settings: SettingsQueries }): ServiceImpl<typeof LoginSettingsService> {
  const { es, settings } = deps;
  for (const [kind, set, resolved] of [
    ["login", SetLoginSettingsSchema, ResolvedLoginSettingsSchema],
    ["password_complexity", SetPasswordComplexitySettingsSchema, ResolvedPasswordComplexitySettingsSchema],
    ["lockout", SetLockoutSettingsSchema, ResolvedLockoutSettingsSchema],
  ] as const) {
    assertMatches(kind, set, carriedBy("set"), { settable: true });
    assertMatches(kind, resolved, carriedBy("value"));
  }
  return {
    async setLoginSettings(req, ctx) {
      return create(SetLoginSettingsResponseSchema, { details: await setProperties(ctx, es, "login", SetLoginSettingsSchema, req.settings!) });
    },
    async resolveLoginSettings(_req, ctx) {
      return create(ResolveLoginSettingsResponseSchema, await resolveSettings(ctx, settings, "login", ResolvedLoginSettingsSchema));
    },
    async setPasswordComplexitySettings(req, ctx) {
      const details = await setProperties(ctx, es, "password_complexity", SetPasswordComplexitySettingsSchema, req.settings!);
      return create(SetPasswordComplexitySettingsResponseSchema, { details });
    },
    async resolvePasswordComplexitySettings(_req, ctx) {
      const resolved = await resolveSettings(ctx, settings, "password_complexity", ResolvedPasswordComplexitySettingsSchema);
      return create(ResolvePasswordComplexitySettingsResponseSchema, resolved);
    },
    async setLockoutSettings(req, ctx) {
      return create(SetLockoutSettingsResponseSchema, { details: await setProperties(ctx, es, "lockout", SetLockoutSettingsSchema, req.settings!) });
    },
    async resolveLockoutSettings(_req, ctx) {
      return create(ResolveLockoutSettingsResponseSchema, await resolveSettings(ctx, settings, "lockout", ResolvedLockoutSettingsSchema));
    },
  };
}
