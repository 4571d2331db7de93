import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  LanguageSettingsService,
  ResolveLanguageSettingsResponseSchema,
  ResolvedLanguageSettingsSchema,
  ResolvedLanguagesSchema,
  SetLanguageSettingsResponseSchema,
} from "../../../gen/svc/settings/language/v3alpha/language_service_pb.js";
import { LanguageSchema, ResolvedStringSchema } from "../../../gen/svc/settings/object/v3alpha/object_pb.js";
import { callInfo, ownerOf } from "../../authz/context.js";
import { settingsWritePermission } from "../../authz/roles.js";
import { changeSettings, type SettingsChange } from "../../command/settings.js";
import { errors } from "../../errors/errors.js";
import type { EventStore } from "../../eventstore/eventstore.js";
import { chainOfTarget } from "../../query/features.js";
import type { SettingsOwner, SettingsQueries } from "../../query/settings.js";
import { toOwner, toSettingsDetails } from "../convert.js";
import { reportedOwner } from "../settings-properties.js";
import { languageDefaults, supportedLanguages } from "../../domain/languages.js";

const supported = new Set<string>(supportedLanguages);
const systemOwner: SettingsOwner = { type: "system", id: "" };

function requireSupported(key: string, field: string) {
  if (!supported.has(key)) {
    throw errors.invalidArgument("LANG-s9p7", `invalid settings.${field}: "${key}" is not a supported language (${supportedLanguages.join(", ")})`);
  }
}


export function languageService(deps: { es: EventStore; settings: SettingsQueries }): ServiceImpl<typeof LanguageSettingsService> {
  return {
    async setLanguages(req, ctx) {
      const info = callInfo(ctx);
      const owner = ownerOf(info.target);
      const needed = settingsWritePermission[info.target.type];
      if (!info.permissions.has(needed)) throw errors.permissionDenied("LANG-p3rm", `missing permission ${needed} in the ${info.target.type} context`);
      const s = req.settings!;
      const change: SettingsChange = { set: {}, reset: [] };
      if (s.defaultLanguage && s.resetDefaultLanguage) {
        throw errors.invalidArgument("LANG-b0th", "invalid settings: default_language and reset_default_language exclude each other");
      }
      if (s.defaultLanguage) {
        requireSupported(s.defaultLanguage.key, "default_language.key");
        change.set.default_language = s.defaultLanguage.key;
      } else if (s.resetDefaultLanguage) change.reset.push("default_language");
      const keys = s.restrictedLanguages ? [...new Set(s.restrictedLanguages.languages.map((l) => l.key))] : undefined;
      if (keys?.length && s.resetRestrictedLanguages) {
        throw errors.invalidArgument("LANG-b0t2", "invalid settings: restricted_languages and reset_restricted_languages exclude each other");
      }
      if (keys?.length) {
        keys.forEach((k, i) => requireSupported(k, `restricted_languages.languages[${i}].key`));
        change.set.restricted_languages = keys;
      } else if (keys || s.resetRestrictedLanguages) change.reset.push("restricted_languages");
      const details = await changeSettings(deps.es, {
        kind: "language",
        instanceId: info.target.instance.id,
        owner,
        creator: info.caller.userId,
        change,
      });
      return create(SetLanguageSettingsResponseSchema, { details: toSettingsDetails(details) });
    },

    async resolveLanguages(_req, ctx) {
      const { target } = callInfo(ctx);
      const self = ownerOf(target);
      const chain = chainOfTarget(target);
      const [values, own] = await Promise.all([deps.settings.resolve("language", chain, languageDefaults), deps.settings.row("language", self)]);
      const def = values.get("default_language");
      const restricted = values.get("restricted_languages");
      const toLanguages = (keys: readonly string[]) => keys.map((key) => create(LanguageSchema, { key }));
      const defOwner = reportedOwner(def, self);
      const restrictedOwner = reportedOwner(restricted, self);
      const supportedOwner = toOwner(systemOwner);
      return create(ResolveLanguageSettingsResponseSchema, {
        details: toSettingsDetails({ sequence: own?.sequence ?? 0, changeDate: own?.changeDate, owner: self }),
        settings: create(ResolvedLanguageSettingsSchema, {
          defaultLanguage: create(ResolvedStringSchema, { value: String(def?.value ?? ""), ...(defOwner ? { owner: defOwner } : {}) }),
          restrictedLanguages: create(ResolvedLanguagesSchema, {
            value: toLanguages((restricted?.value as string[]) ?? []),
            ...(restrictedOwner ? { owner: restrictedOwner } : {}),
          }),
          supportedLanguages: create(ResolvedLanguagesSchema, { value: toLanguages(supportedLanguages), owner: supportedOwner }),
        }),
      });
    },
  };
}
