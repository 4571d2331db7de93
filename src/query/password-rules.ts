import { inheritanceChain } from "../domain/contexts.js";
import { loginTextsEn, type Texts } from "../domain/texts/login.js";
import type { SettingsQueries } from "./settings.js";

/** The texts that say what a new password lacks (the login UI's, in the page's language). */
export type PasswordTexts = Pick<
  Texts,
  | "passwordNeeds"
  | "passwordNeedsLength"
  | "passwordNeedsUppercase"
  | "passwordNeedsLowercase"
  | "passwordNeedsNumber"
  | "passwordNeedsSymbol"
  | "listSeparator"
>;

export interface PasswordRules {
  /** What is wrong with a new password, in the texts' language (the API's: English), or undefined when it is good enough. */
  problem(password: string, texts?: PasswordTexts): string | undefined;
  maxAttempts: number;
  /** Seconds a lockout lasts; 0: until an administrator unlocks the user. */
  lockoutDurationS: number;
}

/** The password rules in force for an organisation: its own settings, else the instance's, else the system's. */
export async function passwordRules(settings: SettingsQueries, instanceId: string, orgId: string): Promise<PasswordRules> {
  const chain = inheritanceChain({ type: "org", instanceId, orgId });
  const [c, l] = await Promise.all([settings.values("password_complexity", chain), settings.values("lockout", chain)]);
  const needs: [boolean, RegExp, keyof PasswordTexts][] = [
    [c.has_uppercase, /\p{Lu}/u, "passwordNeedsUppercase"],
    [c.has_lowercase, /\p{Ll}/u, "passwordNeedsLowercase"],
    [c.has_number, /\p{N}/u, "passwordNeedsNumber"],
    [c.has_symbol, /[^\p{L}\p{N}]/u, "passwordNeedsSymbol"],
  ];
  return {
    maxAttempts: l.max_password_attempts,
    lockoutDurationS: l.lockout_duration,
    problem(password, t = loginTextsEn) {
      const missing = needs.filter(([on, re]) => on && !re.test(password)).map(([, , what]) => t[what]);
      // replacement functions: a text's own "$&" or "$'" stays as written
      if ([...password].length < c.min_length) missing.unshift(t.passwordNeedsLength.replaceAll("{n}", () => String(c.min_length)));
      return missing.length ? t.passwordNeeds.replaceAll("{needs}", () => missing.join(t.listSeparator)) : undefined;
    },
  };
}
