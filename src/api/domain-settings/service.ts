import { create } from "@bufbuild/protobuf";
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
import { assertMatches, carriedBy, resolveSettings, setProperties } from "../settings-properties.js";

/** Domain settings (organisation domain validation, login names with the domain, SMTP senders): Set* and Resolved* messages of the kind's properties. */
export function domainSettingsService(deps: { es: EventStore; settings: SettingsQueries }): ServiceImpl<typeof DomainSettingsService> {
  const { es, settings } = deps;
  assertMatches("domain", SetDomainSettingsSchema, carriedBy("set"), { settable: true });
  assertMatches("domain", ResolvedDomainSettingsSchema, carriedBy("value"));
  return {
    async setDomainSettings(req, ctx) {
      return create(SetDomainSettingsResponseSchema, { details: await setProperties(ctx, es, "domain", SetDomainSettingsSchema, req.settings!) });
    },
    async resolveDomainSettings(_req, ctx) {
      return create(ResolveDomainSettingsResponseSchema, await resolveSettings(ctx, settings, "domain", ResolvedDomainSettingsSchema));
    },
  };
}
