import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  ResolveSecuritySettingsResponseSchema,
  ResolvedSecuritySettingsSchema,
  type SecuritySettingsService,
  SetSecuritySettingsResponseSchema,
  SetSecuritySettingsSchema,
} from "../../../gen/svc/settings/security/v3alpha/security_service_pb.js";
import type { EventStore } from "../../eventstore/eventstore.js";
import type { SettingsQueries } from "../../query/settings.js";
import { assertMatches, carriedBy, resolveSettings, setProperties } from "../settings-properties.js";

/** Security settings (impersonation, iframe embedding): the specification's Set* and Resolved* messages of the kind's properties. */
export function securitySettingsService(deps: { es: EventStore; settings: SettingsQueries }): ServiceImpl<typeof SecuritySettingsService> {
  const { es, settings } = deps;
  assertMatches("security", SetSecuritySettingsSchema, carriedBy("set"), { settable: true });
  assertMatches("security", ResolvedSecuritySettingsSchema, carriedBy("value"));
  return {
    async setSecuritySettings(req, ctx) {
      return create(SetSecuritySettingsResponseSchema, { details: await setProperties(ctx, es, "security", SetSecuritySettingsSchema, req.settings!) });
    },
    async resolveSecuritySettings(_req, ctx) {
      return create(ResolveSecuritySettingsResponseSchema, await resolveSettings(ctx, settings, "security", ResolvedSecuritySettingsSchema));
    },
  };
}
