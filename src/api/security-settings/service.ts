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
import { kindRpcs } from "../settings-properties.js";

/** Security settings (impersonation, iframe embedding): the specification's Set* and Resolved* messages of the kind's properties. */
export function securitySettingsService(deps: { es: EventStore; settings: SettingsQueries }): ServiceImpl<typeof SecuritySettingsService> {
  const rpcs = kindRpcs(deps, "security", {
    set: SetSecuritySettingsSchema,
    resolved: ResolvedSecuritySettingsSchema,
    setResponse: SetSecuritySettingsResponseSchema,
    resolveResponse: ResolveSecuritySettingsResponseSchema,
  });
  return { setSecuritySettings: rpcs.set, resolveSecuritySettings: rpcs.resolve };
}
