import { State } from "../../../gen/svc/resources/object/v3alpha/object_pb.js";
import { ProviderFieldName, type ProviderSearchFilter } from "../../../gen/svc/resources/notification/v3alpha/provider_pb.js";
import type { ProviderFilter, ProviderSort } from "../../query/notification-providers.js";
import { searchRequestOf, textCriterion, type SetFilter } from "../list.js";

const providerSorts: Partial<Record<ProviderFieldName, ProviderSort>> = {
  [ProviderFieldName.ID]: "id",
  [ProviderFieldName.CREATION_DATE]: "creationDate",
  [ProviderFieldName.CHANGE_DATE]: "changeDate",
  [ProviderFieldName.DESCRIPTION]: "description",
};

function providerFilterOf(f: SetFilter<ProviderSearchFilter>): ProviderFilter {
  switch (f.case) {
    case "description":
      return { case: "description", value: textCriterion(f.value.description, f.value.method) };
    case "inIds":
      return { case: "inIds", value: f.value.ids };
    case "state":
      // Any state but ACTIVE asks for the inactive ones.
      return { case: "state", value: f.value.state === State.EFFECTIVE_STATE_ACTIVE ? "active" : "inactive" };
  }
}

/** An SMTP or SMS provider search request in the query's terms. */
export const providerSearchOf = (req: { filters: ProviderSearchFilter[]; sortingColumn: ProviderFieldName }) =>
  searchRequestOf(req, providerFilterOf, providerSorts);
