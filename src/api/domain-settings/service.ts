import type { ServiceImpl } from "@connectrpc/connect";
import {
  ResolveDomainSettingsResponseSchema,
  ResolvedDomainSettingsSchema,
  type DomainSettingsService,
  SetDomainSettingsResponseSchema,
  SetDomainSettingsSchema,
} from "../../../gen/svc/settings/domain/v3alpha/domain_service_pb.js";
import type { EventStore } from "../../eventstore/eventstore.js";
import type { SettingsQueries } from "../../query/settings.js";
import { kindRpcs } from "../settings-properties.js";

/** Domain settings (organisation domain validation, login names with the domain, SMTP senders): Set* and Resolved* messages of the kind's properties. */
export function domainSettingsService(deps: { es: EventStore; settings: SettingsQueries }): ServiceImpl<typeof DomainSettingsService> {
  const rpcs = kindRpcs(deps, "domain", {
    set: SetDomainSettingsSchema,
    resolved: ResolvedDomainSettingsSchema,
    setResponse: SetDomainSettingsResponseSchema,
    resolveResponse: ResolveDomainSettingsResponseSchema,
  });
  return { setDomainSettings: rpcs.set, resolveDomainSettings: rpcs.resolve };
}
