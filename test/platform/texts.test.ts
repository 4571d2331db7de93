import { describe, expect, it } from "vitest";
import { supportedLanguages } from "../../src/domain/settings-kinds.js";
import { translations } from "../../src/domain/texts/translations.js";
import { textsFor } from "../../src/web/texts.js";

const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!).sort();

/** Every built-in text of a language by key: login labels and message subjects and texts. */
function textsOf(language: string): Map<string, string> {
  const { login, messages } = translations[language]!;
  const out = new Map(Object.entries(login).map(([k, v]) => [`login.${k}`, v]));
  for (const [kind, m] of Object.entries(messages)) {
    out.set(`message.${kind}.subject`, m.subject);
    out.set(`message.${kind}.text`, m.text);
  }
  return out;
}

/** Texts that are the same in the language as in English (a word or sign borrowed as it is). */
const same: Record<string, string[]> = { fr: ["login.email"], it: ["login.password"], pt: ["login.email"] };

describe("built-in texts", () => {
  it("exist for every language the server supports and advertises, and for no other", () => {
    expect([...supportedLanguages].sort()).toEqual(Object.keys(translations).sort());
  });

  it("are complete in every language: login labels, password rules and messages, none left in English", () => {
    const en = textsOf("en");
    for (const language of supportedLanguages.filter((l) => l !== "en")) {
      const own = textsOf(language);
      expect([...own.keys()].sort(), language).toEqual([...en.keys()].sort());
      const untranslated = [...en].filter(([k, v]) => own.get(k) === v && k !== "login.listSeparator" && !(same[language] ?? []).includes(k));
      expect(
        untranslated.map(([k]) => k),
        `${language}: texts still in English`,
      ).toEqual([]);
      // a text keeps the placeholders the server fills in: a code or link left out would make a mail useless
      const differing = [...en].filter(([k, v]) => placeholders(own.get(k)!).join() !== placeholders(v).join());
      expect(
        differing.map(([k]) => k),
        `${language}: placeholders differ from English`,
      ).toEqual([]);
    }
  });

  it("give the login UI its labels, in the language asked for", () => {
    for (const language of supportedLanguages) expect(textsFor(language).passwordNeeds).toBe(translations[language]!.login.passwordNeeds);
    expect(textsFor("xx")).toEqual(translations.en!.login);
  });
});
