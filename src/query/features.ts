import type { Target } from "../authz/context.js";
import { settingsChain, type SettingsQueries, type SettingsOwner, type ResolvedValue } from "./settings.js";

/** Feature flags and their built-in defaults (every flag starts off; the first instance turns some on). */
export const featureDefaults = {
  multitenancy_resources_api: false,
  multitenancy_settings: false,
  oidc_token_exchange: false,
} as const;

export type FeatureName = keyof typeof featureDefaults;
export const featureNames = Object.keys(featureDefaults) as FeatureName[];

export function isFeatureName(name: string): name is FeatureName {
  return name in featureDefaults;
}

export function chainOfTarget(target: Target): SettingsOwner[] {
  return settingsChain({
    type: target.type,
    instanceId: target.instance.id,
    ...(target.type === "org" ? { orgId: target.org.id } : {}),
  });
}

export class FeatureQueries {
  constructor(private readonly settings: SettingsQueries) {}

  resolve(chain: SettingsOwner[]): Promise<Map<string, ResolvedValue>> {
    return this.settings.resolve("feature", chain, featureDefaults);
  }

  /**
   * Gates are judged where the request acts: an organisation's flags, else its instance's. A system-context
   * request is judged by the instance it arrived at, so the system cannot be reached past an instance's gate.
   */
  async enabled(name: FeatureName, target: Target): Promise<boolean> {
    const chain = target.type === "system" ? settingsChain({ type: "instance", instanceId: target.instance.id }) : chainOfTarget(target);
    return (await this.resolve(chain)).get(name)?.value === true;
  }
}
