/**
 * The language settings are declared with the other kinds of settings (settings-kinds.ts). These names stay
 * for the modules that still import them from here (src/oidc/endpoints.ts).
 */
import { defaultsOf } from "./settings-kinds.js";

export { supportedLanguages } from "./settings-kinds.js";

export const languageDefaults = defaultsOf("language");
