import { IDPFieldName, type IDPSearchFilter } from "../../../gen/svc/resources/idp/v3alpha/idp_pb.js";
import type { SearchIDPsRequest } from "../../../gen/svc/resources/idp/v3alpha/idp_service_pb.js";
import { State } from "../../../gen/svc/resources/object/v3alpha/object_pb.js";
import type { IdpFilter, IdpSort } from "../../query/idps.js";
import { searchRequestOf, textCriterion, type SetFilter } from "../list.js";

const idpSorts: Partial<Record<IDPFieldName, IdpSort>> = { [IDPFieldName.IDP_FIELD_NAME_NAME]: "name" };

/** The effective states a filter asks for; an unspecified one matches no provider. */
const effectiveStates: Partial<Record<State, "active" | "inactive">> = {
  [State.EFFECTIVE_STATE_ACTIVE]: "active",
  [State.EFFECTIVE_STATE_INACTIVE]: "inactive",
};

function idpFilterOf(f: SetFilter<IDPSearchFilter>): IdpFilter {
  switch (f.case) {
    case "id":
      return { case: "id", value: f.value.id };
    case "name":
      return { case: "name", value: textCriterion(f.value.name, f.value.method) };
    case "state":
      return { case: "state", value: effectiveStates[f.value.state] };
  }
}

/** An identity provider search request in the query's terms. */
export const idpSearchOf = (req: SearchIDPsRequest) => searchRequestOf(req, idpFilterOf, idpSorts);
