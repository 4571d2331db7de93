import { inheritanceChain } from "../domain/contexts.js";
import type { SettingsQueries } from "./settings.js";

export interface PasswordRules {
  /** What is wrong with a new password, or undefined when it is good enough. */
  problem(password: string): string | undefined;
  maxAttempts: number;
  /** Seconds a lockout lasts; 0: until an administrator unlocks the user. */
  lockoutDurationS: number;
}

/** The password rules in force for an organisation: its own settings, else the instance's, else the system's. */
export async function passwordRules(settings: SettingsQueries, instanceId: string, orgId: string): Promise<PasswordRules> {
  const chain = inheritanceChain({ type: "org", instanceId, orgId });
  const [c, l] = await Promise.all([settings.values("password_complexity", chain), settings.values("lockout", chain)]);
  const needs: [boolean, RegExp, string][] = [
    [c.has_uppercase, /\p{Lu}/u, "an upper-case letter"],
    [c.has_lowercase, /\p{Ll}/u, "a lower-case letter"],
    [c.has_number, /\p{N}/u, "a number"],
    [c.has_symbol, /[^\p{L}\p{N}]/u, "a symbol"],
  ];
  return {
    maxAttempts: l.max_password_attempts,
    lockoutDurationS: l.lockout_duration,
    problem(password) {
      const missing = needs.filter(([on, re]) => on && !re.test(password)).map(([, , what]) => what);
      if ([...password].length < c.min_length) missing.unshift(`at least ${c.min_length} characters`);
      return missing.length ? `the password needs ${missing.join(", ")}` : undefined;
    },
  };
}
