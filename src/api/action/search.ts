import { ExecutionType, type ExecutionSearchFilter } from "../../../gen/svc/resources/action/v3alpha/execution_pb.js";
import type { SearchExecutionsRequest, SearchTargetsRequest } from "../../../gen/svc/resources/action/v3alpha/action_service_pb.js";
import { TargetFieldName, type TargetSearchFilter } from "../../../gen/svc/resources/action/v3alpha/target_pb.js";
import { executionIdOf, type ConditionType, type ExecutionCatalogue } from "../../domain/conditions.js";
import { errors } from "../../errors/errors.js";
import type { ExecutionFilter, TargetFilter, TargetSort } from "../../query/actions.js";
import { searchRequestOf, textCriterion, type SetFilter } from "../list.js";

const targetSorts: Partial<Record<TargetFieldName, TargetSort>> = {
  [TargetFieldName.ID]: "id",
  [TargetFieldName.CREATION_DATE]: "creationDate",
  [TargetFieldName.CHANGE_DATE]: "changeDate",
  [TargetFieldName.NAME]: "name",
  [TargetFieldName.TARGET_TYPE]: "targetType",
  [TargetFieldName.URL]: "url",
  [TargetFieldName.TIMEOUT]: "timeout",
  [TargetFieldName.ASYNC]: "async",
  [TargetFieldName.INTERRUPT_ON_ERROR]: "interruptOnError",
};

const targetFilterOf = (f: SetFilter<TargetSearchFilter>): TargetFilter =>
  f.case === "name" ? { case: "name", value: textCriterion(f.value.name, f.value.method) } : { case: "inIds", value: f.value.ids };

/** A target search request in the query's terms. */
export const targetSearchOf = (req: SearchTargetsRequest) => searchRequestOf(req, targetFilterOf, targetSorts);

const executionTypes: Record<ExecutionType, ConditionType | undefined> = {
  [ExecutionType.UNSPECIFIED]: undefined,
  [ExecutionType.REQUEST]: "request",
  [ExecutionType.RESPONSE]: "response",
  [ExecutionType.EVENT]: "event",
  [ExecutionType.FUNCTION]: "function",
};

/** An execution search request in the query's terms: conditions as the IDs of their executions (the catalogue knows the methods and events they name). */
export function executionSearchOf(req: SearchExecutionsRequest, catalogue: ExecutionCatalogue) {
  return searchRequestOf(req, (f: SetFilter<ExecutionSearchFilter>, field): ExecutionFilter => {
    switch (f.case) {
      case "inConditions":
        return { case: "inConditions", value: f.value.conditions.map((c, j) => executionIdOf(c, catalogue, `${field}.in_conditions.conditions[${j}]`).id) };
      case "executionType": {
        const type = executionTypes[f.value.type];
        if (!type) throw errors.invalidArgument("EXEC-typ1", `invalid ${field}.execution_type.type: an execution type is required`);
        return { case: "executionType", value: type };
      }
      case "target":
        return { case: "target", value: f.value.id };
      case "include":
        return { case: "include", value: f.value.include };
    }
  });
}
