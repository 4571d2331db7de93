import { OrganizationFieldName, OrganizationState, type OrganizationSearchFilter } from "../../../gen/svc/resources/org/v3alpha/org_pb.js";
import type { SearchOrganizationsRequest } from "../../../gen/svc/resources/org/v3alpha/org_service_pb.js";
import type { OrgFilter, OrgSort } from "../../query/orgs.js";
import { searchRequestOf, textCriterion, type SetFilter } from "../list.js";

const orgSorts: Partial<Record<OrganizationFieldName, OrgSort>> = {
  [OrganizationFieldName.ID]: "id",
  [OrganizationFieldName.CREATION_DATE]: "creationDate",
  [OrganizationFieldName.CHANGE_DATE]: "changeDate",
  [OrganizationFieldName.NAME]: "name",
};

function orgFilterOf(f: SetFilter<OrganizationSearchFilter>): OrgFilter {
  switch (f.case) {
    case "inIds":
      return { case: "inIds", value: f.value.ids };
    case "name":
      return { case: "name", value: textCriterion(f.value.name, f.value.method) };
    case "domain":
      return { case: "domain", value: textCriterion(f.value.domain, f.value.method) };
    case "state":
      // Any state but INACTIVE asks for the active ones.
      return { case: "state", value: f.value.state === OrganizationState.INACTIVE ? "inactive" : "active" };
  }
}

/** An organisation search request in the query's terms. */
export const orgSearchOf = (req: SearchOrganizationsRequest) => searchRequestOf(req, orgFilterOf, orgSorts);
