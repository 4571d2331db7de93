/**
 * The login UI's language and labels. The page language is the first of `ui_locales`, then of
 * Accept-Language, that the instance allows (its restricted languages) and that has texts; else the
 * instance's default language; else English. The labels are the built-in ones (src/domain/texts/login.ts)
 * unless the text settings override them.
 */
import { loginTextsEn, type Texts } from "../domain/texts/login.js";
import { translations } from "../domain/texts/translations.js";
import { supportedLanguages } from "../domain/settings-kinds.js";

export type { TextKey, Texts } from "../domain/texts/login.js";

/** The built-in labels of `language`, English where it has none. */
export function textsFor(language: string): Texts {
  return { ...(translations[language]?.login ?? loginTextsEn) };
}

/**
 * The labels of `language` in force: `values` are the text settings resolved for the context
 * (`<language>.login.<label>`; their built-in values are those of `textsFor`).
 */
export function customTexts(language: string, values: Readonly<Record<string, string>>): Texts {
  const texts = textsFor(language);
  const prefix = `${language}.login.`;
  for (const key of Object.keys(texts) as (keyof Texts)[]) {
    const value = values[prefix + key];
    if (value !== undefined) texts[key] = value;
  }
  return texts;
}

/** Language tags in order of preference from `ui_locales` ("de-CH fr") or Accept-Language ("de-CH,de;q=0.9,en;q=0.5"). */
export function preferredLanguages(uiLocales: string | undefined, acceptLanguage: string | undefined): string[] {
  const fromUi = (uiLocales ?? "").split(/\s+/).filter(Boolean);
  const fromHeader = (acceptLanguage ?? "")
    .split(",")
    .map((part, i) => {
      const [tag, ...params] = part.trim().split(";");
      const q = Number(
        params
          .find((p) => p.trim().startsWith("q="))
          ?.trim()
          .slice(2) ?? "1",
      );
      return { tag: tag!.trim(), q: Number.isFinite(q) ? q : 0, i };
    })
    .filter((x) => x.tag && x.tag !== "*" && x.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i)
    .map((x) => x.tag);
  return [...fromUi, ...fromHeader].map((t) => t.toLowerCase().split("-")[0]!);
}

/** The page language: the first preferred one the instance allows and the UI has texts for. */
export function chooseLanguage(preferred: string[], allowed: string[], instanceDefault: string): string {
  const usable = (l: string) => allowed.includes(l) && supportedLanguages.includes(l);
  return preferred.find(usable) ?? (usable(instanceDefault) ? instanceDefault : "en");
}
