// English, German and French, as the login UI speaks them. Each area of the console keeps its messages in one file
// (`export const messages = { en: {...}, de: {...}, fr: {...} }`, German and French `satisfies` the English keys),
// so that a missing translation does not compile. Formatting of dates and numbers by Intl.
import { createContext, useContext } from "react";

export const languages = ["en", "de", "fr"] as const;
export type Language = (typeof languages)[number];
export const languageNames: Record<Language, string> = { en: "English", de: "Deutsch", fr: "Français" };

export type Catalogue<T extends Record<string, string>> = { en: T; de: { [K in keyof T]: string }; fr: { [K in keyof T]: string } };

const STORAGE_KEY = "console.language";

export function initialLanguage(): Language {
  const chosen = localStorage.getItem(STORAGE_KEY);
  if (languages.includes(chosen as Language)) return chosen as Language;
  for (const tag of navigator.languages) {
    const base = tag.slice(0, 2).toLowerCase();
    if (languages.includes(base as Language)) return base as Language;
  }
  return "en";
}

export function rememberLanguage(lang: Language): void {
  localStorage.setItem(STORAGE_KEY, lang);
  document.documentElement.lang = lang;
}

export const LanguageContext = createContext<Language>("en");

/** The messages of an area in the page's language; `{name}` placeholders filled from `values`. */
export function useT<T extends Record<string, string>>(catalogue: Catalogue<T>): (key: keyof T, values?: Record<string, string | number>) => string {
  const lang = useContext(LanguageContext);
  const table = catalogue[lang] as Record<keyof T, string>;
  return (key, values) => {
    const text = table[key] ?? catalogue.en[key];
    return values ? text.replace(/\{(\w+)\}/g, (m, k: string) => (k in values ? String(values[k]) : m)) : text;
  };
}

export function useLanguage(): Language {
  return useContext(LanguageContext);
}

export function formatDate(lang: Language, d: Date | undefined): string {
  return d ? new Intl.DateTimeFormat(lang, { dateStyle: "medium", timeStyle: "short" }).format(d) : "";
}
