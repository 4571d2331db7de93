import { errors } from "../errors/errors.js";
import type { Target } from "./context.js";

/**
 * A blocked instance serves nothing but the system API (which unblocks it): RESOURCE_EXHAUSTED (HTTP 429) for
 * any other context in it. The one check of every authorised call, the RPCs' authorization interceptor and the
 * older JSON-only routes (src/api/portability/http.ts) alike.
 */
export function refuseBlockedInstance(target: Target): void {
  if (target.type !== "system" && target.instance.blocked) throw errors.resourceExhausted("LIMIT-bl0k", `the instance is blocked`);
}
