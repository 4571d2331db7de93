import { fromJson, toJson, type DescMessage, type JsonValue, type Message } from "@bufbuild/protobuf";
import type { Interceptor } from "@connectrpc/connect";
import { callInfoKey } from "../authz/context.js";
import { errors } from "../errors/errors.js";
import type { ActionQueries } from "../query/actions.js";
import { methodInfo } from "../schema/descriptors.js";
import { violation } from "../validation/validate.js";
import type { TargetCaller } from "./caller.js";
import { callExecutionIds } from "../domain/conditions.js";

function messageFrom(desc: DescMessage) {
  return (json: unknown) => fromJson(desc, json as JsonValue, { ignoreUnknownFields: false });
}

/**
 * Request and response executions, for every RPC on every protocol (REST passes through here too). Runs
 * after authorization: executions belong to the instance the call acts in, and targets learn who called.
 */
export function createExecutionInterceptor(deps: { actions: ActionQueries; caller: TargetCaller }): Interceptor {
  return (next) => async (req) => {
    if (req.stream || methodInfo(req.method).isPublic) return next(req);
    const info = req.contextValues.get(callInfoKey);
    if (!info) return next(req);
    const instanceId = info.target.instance.id;
    const service = req.service.typeName;
    const base = {
      fullMethod: `/${service}/${req.method.name}`,
      instanceID: instanceId,
      orgID: info.target.type === "org" ? info.target.org.id : info.caller.orgId,
      projectID: "",
      userID: info.caller.userId,
    };
    let request = req;
    const before = await deps.actions.targetsFor(instanceId, callExecutionIds("request", service, req.method.name));
    if (before.length) {
      const input = req.method.input;
      const { value, replaced } = await deps.caller.runChain(
        before,
        { ...base, request: toJson(input, req.message) },
        {
          replaceKey: "request",
          accept: messageFrom(input),
        },
      );
      if (replaced) {
        const message = value as Message;
        const v = violation(input, message);
        if (v) throw errors.invalidArgument("EXEC-r3q1", `the request an execution target returned is invalid: ${v}`);
        request = { ...req, message } as typeof req;
      }
    }
    const res = await next(request);
    if (res.stream) return res;
    const after = await deps.actions.targetsFor(instanceId, callExecutionIds("response", service, req.method.name));
    if (!after.length) return res;
    const output = req.method.output;
    const { value, replaced } = await deps.caller.runChain(
      after,
      { ...base, request: toJson(req.method.input, request.message), response: toJson(output, res.message) },
      { replaceKey: "response", accept: messageFrom(output) },
    );
    return replaced ? ({ ...res, message: value as Message } as typeof res) : res;
  };
}
