import { create } from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  LoginSettingsService,
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
import { complexityDefaults, lockoutDefaults, loginDefaults } from "../../query/password-rules.js";
import type { SettingsQueries } from "../../query/settings.js";
import { resolveProperties, setProperties } from "../settings-properties.js";

const between = (min: number, max: number) => (value: unknown) => (Number(value) < min || Number(value) > max ? `must be between ${min} and ${max}` : undefined);

export function loginSettingsService(deps: { es: EventStore; settings: SettingsQueries }): ServiceImpl<typeof LoginSettingsService> {
  const { es, settings } = deps;
  return {
    async setLoginSettings(req, ctx) {
      const details = await setProperties(ctx, es, "login", reflect(SetLoginSettingsSchema, req.settings!));
      return create(SetLoginSettingsResponseSchema, { details });
    },
    async resolveLoginSettings(_req, ctx) {
      return create(ResolveLoginSettingsResponseSchema, await resolveProperties(ctx, settings, "login", ResolvedLoginSettingsSchema, loginDefaults));
    },
    async setPasswordComplexitySettings(req, ctx) {
      const check = (name: string, v: unknown) => (name === "min_length" ? between(1, 200)(v) : undefined);
      const details = await setProperties(ctx, es, "password_complexity", reflect(SetPasswordComplexitySettingsSchema, req.settings!), check);
      return create(SetPasswordComplexitySettingsResponseSchema, { details });
    },
    async resolvePasswordComplexitySettings(_req, ctx) {
      const resolved = await resolveProperties(ctx, settings, "password_complexity", ResolvedPasswordComplexitySettingsSchema, complexityDefaults);
      return create(ResolvePasswordComplexitySettingsResponseSchema, resolved);
    },
    async setLockoutSettings(req, ctx) {
      const details = await setProperties(ctx, es, "lockout", reflect(SetLockoutSettingsSchema, req.settings!), (_name, v) => between(0, 1000)(v));
      return create(SetLockoutSettingsResponseSchema, { details });
    },
    async resolveLockoutSettings(_req, ctx) {
      return create(ResolveLockoutSettingsResponseSchema, await resolveProperties(ctx, settings, "lockout", ResolvedLockoutSettingsSchema, lockoutDefaults));
    },
  };
}
