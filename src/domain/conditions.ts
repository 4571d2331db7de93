import { create } from "@bufbuild/protobuf";
import { ConditionSchema, type Condition } from "../../gen/svc/resources/action/v3alpha/execution_pb.js";
import { errors } from "../errors/errors.js";

export type ConditionType = "request" | "response" | "function" | "event";

/** What exists to attach executions to: the RPCs and services mounted, the functions invoked, the event types. */
export interface ExecutionCatalogue {
  methods(): string[];
  services(): string[];
  functions: readonly string[];
  eventTypes: readonly string[];
}

/** Functions the server really invokes (the OIDC provider calls them before it creates these). */
export const executionFunctions = ["preaccesstoken", "preuserinfo"] as const;

const GROUP_SUFFIX = ".*";

/**
 * The execution ID of a condition, as the contract fixes it: `request/<service>/<method>`,
 * `request/<service>`, `request`; the same with `response`; `function/<name>`; `event/<type>`,
 * `event/<group>.*`, `event`. Unknown methods, services, functions and events are INVALID_ARGUMENT.
 */
export function executionIdOf(c: Condition, catalogue: ExecutionCatalogue, field = "execution.condition"): { id: string; type: ConditionType } {
  const ct = c.conditionType;
  switch (ct.case) {
    case "request":
    case "response": {
      const inner = ct.value.condition;
      if (inner.case === "method") {
        const path = inner.value.startsWith("/") ? inner.value : `/${inner.value}`;
        if (!catalogue.methods().includes(path))
          throw errors.invalidArgument("EXEC-m3th", `invalid ${field}.${ct.case}.method: "${inner.value}" is not a method of this server`);
        return { id: `${ct.case}${path}`, type: ct.case };
      }
      if (inner.case === "service") {
        if (!catalogue.services().includes(inner.value))
          throw errors.invalidArgument("EXEC-s3rv", `invalid ${field}.${ct.case}.service: "${inner.value}" is not a service of this server`);
        return { id: `${ct.case}/${inner.value}`, type: ct.case };
      }
      if (inner.case === "all") return { id: ct.case, type: ct.case };
      throw errors.invalidArgument("EXEC-c0nd", `invalid ${field}.${ct.case}: exactly one of method, service, all is required`);
    }
    case "function":
      if (!catalogue.functions.includes(ct.value))
        throw errors.invalidArgument("EXEC-func", `invalid ${field}.function: "${ct.value}" is not a function (${catalogue.functions.join(", ")})`);
      return { id: `function/${ct.value}`, type: "function" };
    case "event": {
      const inner = ct.value.condition;
      if (inner.case === "event") {
        if (!catalogue.eventTypes.includes(inner.value))
          throw errors.invalidArgument("EXEC-evnt", `invalid ${field}.event.event: "${inner.value}" is not an event type`);
        return { id: `event/${inner.value}`, type: "event" };
      }
      if (inner.case === "group") {
        const group = inner.value.endsWith(GROUP_SUFFIX) ? inner.value.slice(0, -GROUP_SUFFIX.length) : inner.value;
        if (!catalogue.eventTypes.some((t) => t.startsWith(`${group}.`)))
          throw errors.invalidArgument("EXEC-grp1", `invalid ${field}.event.group: no event type is in the group "${group}"`);
        return { id: `event/${group}${GROUP_SUFFIX}`, type: "event" };
      }
      if (inner.case === "all") return { id: "event", type: "event" };
      throw errors.invalidArgument("EXEC-c0n2", `invalid ${field}.event: exactly one of event, group, all is required`);
    }
    default:
      throw errors.invalidArgument("EXEC-c0n3", `invalid ${field}: a condition is required`);
  }
}

export function conditionTypeOfId(id: string): ConditionType | undefined {
  const head = id.split("/", 1)[0];
  return head === "request" || head === "response" || head === "function" || head === "event" ? head : undefined;
}

/** The condition an execution ID stands for (the inverse of executionIdOf). */
export function conditionOfId(id: string): Condition {
  const type = conditionTypeOfId(id);
  const rest = id.slice((type ?? "").length + 1);
  switch (type) {
    case "request":
    case "response": {
      const condition = !rest
        ? { case: "all" as const, value: true }
        : rest.includes("/")
          ? { case: "method" as const, value: `/${rest}` }
          : { case: "service" as const, value: rest };
      return create(ConditionSchema, { conditionType: { case: type, value: { condition } } });
    }
    case "function":
      return create(ConditionSchema, { conditionType: { case: "function", value: rest } });
    case "event": {
      const condition = !rest
        ? { case: "all" as const, value: true }
        : rest.endsWith(GROUP_SUFFIX)
          ? { case: "group" as const, value: rest.slice(0, -GROUP_SUFFIX.length) }
          : { case: "event" as const, value: rest };
      return create(ConditionSchema, { conditionType: { case: "event", value: { condition } } });
    }
    default:
      return create(ConditionSchema, {});
  }
}

/** Candidate execution IDs of a call, most specific first: method, service, all. */
export function callExecutionIds(type: "request" | "response", service: string, method: string): string[] {
  return [`${type}/${service}/${method}`, `${type}/${service}`, type];
}

/** Candidate execution IDs of an event, most specific first: the type, each group from the longest, all. */
export function eventExecutionIds(eventType: string): string[] {
  const parts = eventType.split(".");
  const groups = parts.slice(0, -1).map((_, i) => `event/${parts.slice(0, parts.length - 1 - i).join(".")}${GROUP_SUFFIX}`);
  return [`event/${eventType}`, ...groups, "event"];
}
