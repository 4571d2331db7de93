import { settingsChain, type SettingsQueries } from "./settings.js";

/** Password complexity: what a new password must contain. Built-in defaults, overridable per instance and organisation. */
export const complexityDefaults = { min_length: 8, has_uppercase: true, has_lowercase: true, has_number: true, has_symbol: true };
/** Lockout: failed password checks allowed before the user is locked until unlocked (0: never locked). */
export const lockoutDefaults = { max_password_attempts: 5 };
/** Login: self-registration is off unless allowed. */
export const loginDefaults = { allow_register: false };

export interface PasswordRules {
  /** What is wrong with a new password, or undefined when it is good enough. */
  problem(password: string): string | undefined;
  maxAttempts: number;
}

/** The password rules in force for an organisation: its own settings, else the instance's, else the system's. */
export async function passwordRules(settings: SettingsQueries, instanceId: string, orgId: string): Promise<PasswordRules> {
  const chain = settingsChain({ type: "org", instanceId, orgId });
  const [c, l] = await Promise.all([settings.resolve("password_complexity", chain, complexityDefaults), settings.resolve("lockout", chain, lockoutDefaults)]);
  const v = (m: Map<string, { value: unknown }>, k: string) => m.get(k)?.value;
  const minLength = Number(v(c, "min_length"));
  const needs: [boolean, RegExp, string][] = [
    [!!v(c, "has_uppercase"), /\p{Lu}/u, "an upper-case letter"],
    [!!v(c, "has_lowercase"), /\p{Ll}/u, "a lower-case letter"],
    [!!v(c, "has_number"), /\p{N}/u, "a number"],
    [!!v(c, "has_symbol"), /[^\p{L}\p{N}]/u, "a symbol"],
  ];
  return {
    maxAttempts: Number(v(l, "max_password_attempts")),
    problem(password) {
      const missing = needs.filter(([on, re]) => on && !re.test(password)).map(([, , what]) => what);
      if ([...password].length < minLength) missing.unshift(`at least ${minLength} characters`);
      return missing.length ? `the password needs ${missing.join(", ")}` : undefined;
    },
  };
}
