import type { ApplicationSearchFilter } from "../../../gen/svc/resources/application/v3alpha/application_pb.js";
import type { SearchApplicationsRequest } from "../../../gen/svc/resources/application/v3alpha/application_service_pb.js";
import type { ApplicationFilter } from "../../query/applications.js";
import { searchRequestOf, textCriterion, type SetFilter } from "../list.js";

function applicationFilterOf(f: SetFilter<ApplicationSearchFilter>): ApplicationFilter {
  switch (f.case) {
    case "inIds":
      return { case: "inIds", value: f.value.ids };
    case "name":
      return { case: "name", value: textCriterion(f.value.name, f.value.method) };
    case "projectId":
      return { case: "projectId", value: f.value.projectId };
  }
}

/** An application search request in the query's terms (it names no sorting field). */
export const applicationSearchOf = (req: SearchApplicationsRequest) => searchRequestOf(req, applicationFilterOf);
