import { de } from "./languages/de.js";
import { es } from "./languages/es.js";
import { fr } from "./languages/fr.js";
import { it } from "./languages/it.js";
import { ja } from "./languages/ja.js";
import { pl } from "./languages/pl.js";
import { pt } from "./languages/pt.js";
import { ru } from "./languages/ru.js";
import { zh } from "./languages/zh.js";
import { loginTextsEn, type Texts } from "./login.js";
import { type Catalogue, messagesEn } from "./messages.js";

/**
 * One language's built-in texts: every login UI label and every message, complete (the types make a missing
 * key a compile error; test/platform/texts.test.ts finds keys left in English and placeholders that differ).
 */
export interface Translation {
  login: Texts;
  messages: Catalogue;
}

/** The languages the server ships texts for: these and only these are offered and advertised. */
export const translations: Readonly<Record<string, Translation>> = {
  en: { login: loginTextsEn, messages: messagesEn },
  de,
  es,
  fr,
  it,
  ja,
  pl,
  pt,
  ru,
  zh,
};
