import { create } from "@bufbuild/protobuf";
import { durationFromMs, timestampFromDate, type Duration } from "@bufbuild/protobuf/wkt";
import { OwnerSchema, OwnerType } from "../../../gen/svc/object/v3alpha/object_pb.js";
import { ExecutionSchema, GetExecutionSchema } from "../../../gen/svc/resources/action/v3alpha/execution_pb.js";
import { GetTargetSchema, TargetSchema, type PatchTarget, type Target } from "../../../gen/svc/resources/action/v3alpha/target_pb.js";
import { DetailsSchema } from "../../../gen/svc/resources/object/v3alpha/object_pb.js";
import { conditionOfId } from "../../domain/conditions.js";
import type { ResourceDetails } from "../../command/targets.js";
import type { TargetConfig } from "../../domain/targets.js";
import type { ExecutionView, TargetView } from "../../query/actions.js";

export function toDetails(d: ResourceDetails) {
  return create(DetailsSchema, {
    id: d.id,
    sequence: BigInt(d.sequence),
    changeDate: timestampFromDate(d.changeDate),
    resourceOwner: create(OwnerSchema, { type: OwnerType.INSTANCE, id: d.instanceId }),
  });
}

export function durationToMs(d: Duration): number {
  return Number(d.seconds) * 1000 + Math.round(d.nanos / 1e6);
}

export function targetConfigOf(t: Target): TargetConfig {
  return {
    name: t.name,
    targetType: t.targetType.case === "restRequestResponse" ? "rest_request_response" : "rest_webhook",
    url: t.targetType.value?.url ?? "",
    timeoutMs: durationToMs(t.timeout!),
    isAsync: t.executionType.case === "isAsync" && t.executionType.value,
    interruptOnError: t.executionType.case === "interruptOnError" && t.executionType.value,
  };
}

/** Only what the patch carries; a set execution_type choice decides both flags. */
export function targetChangesOf(p: PatchTarget): Partial<TargetConfig> {
  const out: Partial<TargetConfig> = {};
  if (p.name !== undefined) out.name = p.name;
  if (p.targetType.case) {
    out.targetType = p.targetType.case === "restRequestResponse" ? "rest_request_response" : "rest_webhook";
    out.url = p.targetType.value.url;
  }
  if (p.timeout) out.timeoutMs = durationToMs(p.timeout);
  if (p.executionType.case === "isAsync") Object.assign(out, { isAsync: p.executionType.value, interruptOnError: false });
  if (p.executionType.case === "interruptOnError") Object.assign(out, { interruptOnError: p.executionType.value, isAsync: false });
  return out;
}

export function toGetTarget(t: TargetView) {
  const url = { url: t.url };
  return create(GetTargetSchema, {
    details: toDetails({ id: t.id, sequence: t.sequence, changeDate: t.changeDate, instanceId: t.instanceId }),
    target: create(TargetSchema, {
      name: t.name,
      targetType: t.targetType === "rest_request_response" ? { case: "restRequestResponse", value: url } : { case: "restWebhook", value: url },
      timeout: durationFromMs(t.timeoutMs),
      executionType: t.isAsync ? { case: "isAsync", value: true } : t.interruptOnError ? { case: "interruptOnError", value: true } : { case: undefined },
    }),
  });
}

export function toGetExecution(x: ExecutionView) {
  return create(GetExecutionSchema, {
    details: toDetails({ id: x.id, sequence: x.sequence, changeDate: x.changeDate, instanceId: x.instanceId }),
    execution: create(ExecutionSchema, { condition: conditionOfId(x.id), targets: x.targets, includes: x.includes }),
  });
}
