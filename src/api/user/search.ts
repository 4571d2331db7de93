import { UserFieldName, type UserState, UserType, type UserSearchFilter } from "../../../gen/svc/resources/user/v3alpha/user_pb.js";
import type { SearchUsersRequest } from "../../../gen/svc/resources/user/v3alpha/user_service_pb.js";
import type { UserFilter, UserSort, UserStateName } from "../../query/users.js";
import { searchRequestOf, textCriterion, type SetFilter } from "../list.js";
import { userStates } from "./convert.js";

const userSorts: Partial<Record<UserFieldName, UserSort>> = {
  [UserFieldName.ID]: "id",
  [UserFieldName.CREATION_DATE]: "creationDate",
  [UserFieldName.CHANGE_DATE]: "changeDate",
  [UserFieldName.USERNAME]: "username",
  [UserFieldName.DISPLAY_NAME]: "displayName",
  [UserFieldName.EMAIL]: "email",
  [UserFieldName.STATE]: "state",
  [UserFieldName.TYPE]: "type",
};

/** The projection's name of a state; "" for one it has none for (UNSPECIFIED), which matches no user. */
const stateNameOf = (state: UserState): UserStateName | "" => (Object.keys(userStates) as UserStateName[]).find((k) => userStates[k] === state) ?? "";

function userFilterOf(f: SetFilter<UserSearchFilter>): UserFilter {
  switch (f.case) {
    case "inIds":
      return { case: "inIds", value: f.value.ids };
    case "username":
      return { case: "username", value: textCriterion(f.value.username, f.value.method) };
    case "displayName":
      return { case: "displayName", value: textCriterion(f.value.displayName, f.value.method) };
    case "email":
      return { case: "email", value: textCriterion(f.value.address, f.value.method) };
    case "state":
      return { case: "state", value: stateNameOf(f.value.state) };
    case "type":
      return { case: "type", value: f.value.type === UserType.MACHINE ? "machine" : "human" };
    case "organizationId":
      return { case: "organizationId", value: f.value.organizationId };
  }
}

/** A user search request in the query's terms. */
export const userSearchOf = (req: SearchUsersRequest) => searchRequestOf(req, userFilterOf, userSorts);
