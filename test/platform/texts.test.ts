import { describe, expect, it } from "vitest";
import { textsFor, translatedLanguages } from "../../src/web/texts.js";

describe("login UI texts", () => {
  it("are complete in every language the UI offers (and so advertises in ui_locales_supported)", () => {
    const en = textsFor("en");
    const keys = Object.keys(en) as (keyof typeof en)[];
    // Words that are the same in the language as in English.
    const same: Record<string, string[]> = { fr: ["email"] };
    for (const lang of translatedLanguages.filter((l) => l !== "en")) {
      // A missing key falls back to English in the middle of a page in another language.
      const own = textsFor(lang);
      const untranslated = keys.filter((k) => own[k] === en[k] && !(same[lang] ?? []).includes(k));
      expect(untranslated, `${lang}: keys still in English`).toEqual([]);
    }
  });
});
