import { ProjectFieldName, type ProjectSearchFilter } from "../../../gen/svc/resources/project/v3alpha/project_pb.js";
import type { SearchProjectsRequest } from "../../../gen/svc/resources/project/v3alpha/project_service_pb.js";
import type { ProjectFilter, ProjectSort } from "../../query/projects.js";
import { searchRequestOf, textCriterion, type SetFilter } from "../list.js";

const projectSorts: Partial<Record<ProjectFieldName, ProjectSort>> = {
  [ProjectFieldName.ID]: "id",
  [ProjectFieldName.CREATION_DATE]: "creationDate",
  [ProjectFieldName.CHANGE_DATE]: "changeDate",
  [ProjectFieldName.NAME]: "name",
};

function projectFilterOf(f: SetFilter<ProjectSearchFilter>): ProjectFilter {
  switch (f.case) {
    case "inIds":
      return { case: "inIds", value: f.value.ids };
    case "name":
      return { case: "name", value: textCriterion(f.value.name, f.value.method) };
    case "organizationId":
      return { case: "organizationId", value: f.value.organizationId };
  }
}

/** A project search request in the query's terms. */
export const projectSearchOf = (req: SearchProjectsRequest) => searchRequestOf(req, projectFilterOf, projectSorts);
