/**
 * The languages the server ships translations for: the system's supported languages, immutable.
 * Restricted and default languages must be chosen from these.
 */
export const supportedLanguages = ["de", "en", "es", "fr", "it", "ja", "pl", "pt", "ru", "zh"] as const;

export const languageDefaults = {
  default_language: "en",
  restricted_languages: [...supportedLanguages] as string[],
};
