import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { ResolvedStringSchema } from "../../../gen/svc/settings/object/v3alpha/object_pb.js";
import { ResolveTextsResponseSchema, SetTextsResponseSchema, type TextSettingsService } from "../../../gen/svc/settings/text/v3alpha/text_service_pb.js";
import { reportedOwner, type PropertyRequest } from "../../domain/settings.js";
import { supportedLanguages } from "../../domain/settings-kinds.js";
import { textKeysOf } from "../../domain/texts/settings.js";
import { errors } from "../../errors/errors.js";
import type { EventStore } from "../../eventstore/eventstore.js";
import type { SettingsQueries } from "../../query/settings.js";
import { toOwner } from "../convert.js";
import { readSettings, setSettings } from "../settings-properties.js";

/**
 * Text settings: the kind "text" (src/domain/texts/settings.ts) holds every language's texts as properties
 * `<language>.<key>`; this service shows one language at a time under the keys alone.
 */
export function textSettingsService(deps: { es: EventStore; settings: SettingsQueries }): ServiceImpl<typeof TextSettingsService> {
  const keysByLanguage = new Map(supportedLanguages.map((l) => [l, [...textKeysOf(l).keys()]]));
  const keysOf = (language: string) => {
    const keys = keysByLanguage.get(language);
    if (!keys) throw errors.invalidArgument("TEXT-l4ng", `invalid language: "${language}" is not a supported language (${supportedLanguages.join(", ")})`);
    return keys;
  };
  return {
    async setTexts(req, ctx) {
      const keys = keysOf(req.language);
      const request: Record<string, PropertyRequest> = {};
      for (const [key, text] of Object.entries(req.texts)) {
        if (!keys.includes(key)) throw errors.invalidArgument("TEXT-k3y0", `invalid texts["${key.slice(0, 100)}"]: no such text (ResolveTexts lists the keys)`);
        request[`${req.language}.${key}`] = text.value.case === "reset" ? { reset: true } : { set: text.value.value };
      }
      if (!Object.keys(request).length) throw errors.invalidArgument("TEXT-n0ne", "invalid texts: give at least one text to set or reset");
      const prefix = `${req.language}.`.length;
      const fieldOf = (property: string) => `texts["${property.slice(prefix)}"].set`;
      return create(SetTextsResponseSchema, { details: await setSettings(ctx, deps.es, "text", request, fieldOf) });
    },

    async resolveTexts(req, ctx) {
      const keys = keysOf(req.language);
      const { values, self, details } = await readSettings(ctx, deps.settings, "text");
      const texts = Object.fromEntries(
        keys.map((key) => {
          const v = values.get(`${req.language}.${key}`)!;
          const owner = reportedOwner(v, self);
          return [key, create(ResolvedStringSchema, { value: v.value as string, ...(owner ? { owner: toOwner(owner) } : {}) })];
        }),
      );
      return create(ResolveTextsResponseSchema, { details, texts });
    },
  };
}
