import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type LanguageSettingsService,
  ResolveLanguageSettingsResponseSchema,
  ResolvedLanguageSettingsSchema,
  SetLanguageSettingsResponseSchema,
} from "../../../gen/svc/settings/language/v3alpha/language_service_pb.js";
import { errors } from "../../errors/errors.js";
import type { EventStore } from "../../eventstore/eventstore.js";
import type { SettingsQueries } from "../../query/settings.js";
import { assertMatches, carriedBy, resolveSettings, setSettings, type SettingsRequest } from "../settings-properties.js";

/**
 * The language settings are a kind like any other (src/domain/settings-kinds.ts); only their Set form is the
 * specification's own: a property is set by giving it and reset by its `reset_*` flag (the restricted
 * languages also by an empty list), and languages are `Language {key}` messages.
 */
export function languageService(deps: { es: EventStore; settings: SettingsQueries }): ServiceImpl<typeof LanguageSettingsService> {
  assertMatches("language", ResolvedLanguageSettingsSchema, carriedBy("value"));
  const fieldOf = (property: string, item?: number) =>
    property === "restricted_languages" && item !== undefined ? `settings.restricted_languages.languages[${item}].key` : `settings.${property}.key`;
  return {
    async setLanguages(req, ctx) {
      const s = req.settings!;
      const restricted = s.restrictedLanguages?.languages.map((l) => l.key);
      const both =
        (s.defaultLanguage && s.resetDefaultLanguage && "default_language") || (restricted?.length && s.resetRestrictedLanguages && "restricted_languages");
      if (both) throw errors.invalidArgument("LANG-b0th", `invalid settings: ${both} and reset_${both} exclude each other`);
      const request: SettingsRequest<"language"> = {
        default_language: s.defaultLanguage ? { set: s.defaultLanguage.key } : s.resetDefaultLanguage ? { reset: true } : undefined,
        restricted_languages: restricted?.length ? { set: restricted } : restricted || s.resetRestrictedLanguages ? { reset: true } : undefined,
      };
      return create(SetLanguageSettingsResponseSchema, { details: await setSettings(ctx, deps.es, "language", request, fieldOf) });
    },

    async resolveLanguages(_req, ctx) {
      return create(ResolveLanguageSettingsResponseSchema, await resolveSettings(ctx, deps.settings, "language", ResolvedLanguageSettingsSchema));
    },
  };
}
