import { chainOfTarget, inheritanceChain, type Target } from "../domain/contexts.js";
import type { FeatureName } from "../domain/settings-kinds.js";
import type { SettingsQueries } from "./settings.js";

export { featureNames, isFeatureName, type FeatureName } from "../domain/settings-kinds.js";

/** The feature flags: the "feature" kind of settings, and the gates the authorization interceptor asks. */
export class FeatureQueries {
  constructor(private readonly settings: SettingsQueries) {}

  /**
   * Gates are judged where the request acts: an organisation's flags, else its instance's. A system-context
   * request is judged by the instance it arrived at, so the system cannot be reached past an instance's gate.
   */
  async enabled(name: FeatureName, target: Target): Promise<boolean> {
    const chain = target.type === "system" ? inheritanceChain({ type: "instance", instanceId: target.instance.id }) : chainOfTarget(target);
    return (await this.settings.values("feature", chain))[name];
  }
}
