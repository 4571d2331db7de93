import type { ActionQueries } from "../query/actions.js";
import type { TargetCaller } from "./caller.js";
import type { executionFunctions } from "../domain/conditions.js";

export type ExecutionFunction = (typeof executionFunctions)[number];

/**
 * Function executions: the points where the server itself asks targets, e.g. before it creates an access
 * token or a userinfo response. `value` is what a rest_request_response target may replace (claims to add);
 * the same rules as for request executions apply (order, async, interrupt_on_error, timeout).
 */
export class FunctionExecutions {
  constructor(
    private readonly actions: ActionQueries,
    private readonly caller: TargetCaller,
  ) {}

  async run<T>(
    instanceId: string,
    name: ExecutionFunction,
    context: Record<string, unknown>,
    key: string,
    value: T,
    accept?: (json: unknown) => T,
  ): Promise<T> {
    const targets = await this.actions.targetsFor(instanceId, [`function/${name}`]);
    if (!targets.length) return value;
    const out = await this.caller.runChain(
      targets,
      { function: `function/${name}`, instanceID: instanceId, ...context, [key]: value },
      { replaceKey: key, accept },
    );
    return out.value as T;
  }
}
