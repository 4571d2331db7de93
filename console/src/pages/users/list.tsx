// /users: one page of the chosen organisation's users, one SearchUsers a page (nothing per row). Filters, order and
// page live in the URL's query, so that going back from a user returns to the same page.
import { useQuery } from "@connectrpc/connect-query";
import { keepPreviousData } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { TextFilterMethod } from "../../../../gen/svc/resources/object/v3alpha/object_pb.js";
import { type GetUser, UserFieldName, type UserSearchFilterSchema, UserState, UserType } from "../../../../gen/svc/resources/user/v3alpha/user_pb.js";
import { UserService } from "../../../../gen/svc/resources/user/v3alpha/user_service_pb.js";
import { orgCtx, useCan, useOrg } from "../../access";
import { errorOf } from "../../api";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/users";
import { navigate, useLocation } from "../../router";
import { type Column, DataTable, ErrorText, Field, Link, Page, Select, useDate } from "../../ui";
import { useStateLabel } from "./common";

const sorts = {
  username: UserFieldName.USERNAME,
  displayName: UserFieldName.DISPLAY_NAME,
  email: UserFieldName.EMAIL,
  type: UserFieldName.TYPE,
  state: UserFieldName.STATE,
  changed: UserFieldName.CHANGE_DATE,
  id: UserFieldName.ID,
} as const;
type SortKey = keyof typeof sorts;

const searchFields = ["username", "displayName", "email"] as const;
type SearchField = (typeof searchFields)[number];

const states: Record<string, UserState> = {
  active: UserState.ACTIVE,
  inactive: UserState.INACTIVE,
  locked: UserState.LOCKED,
  initial: UserState.INITIAL,
};
const types: Record<string, UserType> = { human: UserType.HUMAN, machine: UserType.MACHINE };
const limits = [20, 50, 100];

type Filter = MessageInitShape<typeof UserSearchFilterSchema>;

function textFilter(field: SearchField, text: string): Filter {
  const method = TextFilterMethod.CONTAINS_IGNORE_CASE;
  switch (field) {
    case "username":
      return { filter: { case: "username", value: { username: text, method } } };
    case "displayName":
      return { filter: { case: "displayName", value: { displayName: text, method } } };
    case "email":
      return { filter: { case: "email", value: { address: text, method } } };
  }
}

/** The list as it was last shown (filters, order, page), for the links back to it. */
let lastListSearch = "";
export const listHref = () => `/users${lastListSearch}`;

export function displayNameOf(u: GetUser): string {
  return u.type.case === "human" ? (u.type.value.profile?.displayName ?? "") : u.type.case === "machine" ? u.type.value.name : "";
}

export function UserList() {
  const t = useT(messages);
  const c = useT(coreMessages);
  const can = useCan();
  const { orgId } = useOrg();
  const { query } = useLocation();
  const date = useDate();
  const stateLabel = useStateLabel();

  const q = query.get("q") ?? "";
  const field: SearchField = searchFields.includes(query.get("in") as SearchField) ? (query.get("in") as SearchField) : "username";
  const type = query.get("type") ?? "";
  const state = query.get("state") ?? "";
  const sort: SortKey = (query.get("sort") ?? "") in sorts ? (query.get("sort") as SortKey) : "username";
  const asc = query.get("asc") !== "0";
  const offset = Math.max(0, Number(query.get("offset")) || 0);
  const limit = limits.includes(Number(query.get("limit"))) ? Number(query.get("limit")) : 20;

  const search = query.toString();
  useEffect(() => {
    lastListSearch = search ? `?${search}` : "";
  }, [search]);
  const [draft, setDraft] = useState(q);
  const [draftField, setDraftField] = useState<SearchField>(field);

  /** New query parameters (a filter or order resets the page unless it is the page itself). */
  const update = (changes: Record<string, string | number | undefined>) => {
    const p = new URLSearchParams(query);
    if (!("offset" in changes)) p.delete("offset");
    for (const [k, v] of Object.entries(changes)) {
      if (v === undefined || v === "" || (k === "offset" && v === 0)) p.delete(k);
      else p.set(k, String(v));
    }
    const s = p.toString();
    navigate(`/users${s ? `?${s}` : ""}`, true);
  };

  const filters: Filter[] = [];
  if (q) filters.push(textFilter(field, q));
  if (types[type]) filters.push({ filter: { case: "type", value: { type: types[type] } } });
  if (states[state]) filters.push({ filter: { case: "state", value: { state: states[state] } } });

  const users = useQuery(
    UserService.method.searchUsers,
    { ctx: orgCtx(orgId), query: { offset: BigInt(offset), limit, asc }, sortingColumn: sorts[sort], filters },
    { placeholderData: keepPreviousData },
  );

  const columns: Column<GetUser>[] = [
    {
      key: "username",
      label: t("username"),
      sort: "username",
      render: (u) => <Link to={`/users/${encodeURIComponent(u.details?.id ?? "")}`}>{u.username}</Link>,
    },
    { key: "displayName", label: t("displayName"), sort: "displayName", render: displayNameOf },
    { key: "email", label: t("email"), sort: "email", render: (u) => (u.type.case === "human" ? (u.type.value.email?.address ?? "") : "") },
    { key: "type", label: t("type"), sort: "type", render: (u) => (u.type.case === "machine" ? t("machine") : t("human")) },
    { key: "state", label: c("state"), sort: "state", render: (u) => stateLabel(u.state) },
    { key: "changed", label: c("changed"), sort: "changed", render: (u) => date(u.details?.changeDate) },
  ];

  return (
    <Page
      title={t("title")}
      actions={
        can("user.write") && (
          <>
            <button type="button" className="primary" onClick={() => navigate("/users/create/human")}>
              {t("newHuman")}
            </button>
            <button type="button" onClick={() => navigate("/users/create/machine")}>
              {t("newMachine")}
            </button>
          </>
        )
      }
    >
      <search aria-label={t("searchLabel")}>
        <form
          className="toolbar"
          onSubmit={(e) => {
            e.preventDefault();
            update({ q: draft.trim(), in: draftField === "username" ? undefined : draftField });
          }}
        >
          <Select
            label={t("searchIn")}
            name="search_in"
            value={draftField}
            onChange={(v) => setDraftField(v as SearchField)}
            options={[
              { value: "username", label: t("username") },
              { value: "displayName", label: t("displayName") },
              { value: "email", label: t("email") },
            ]}
          />
          <Field label={t("searchText")} name="q" type="search" value={draft} onChange={(e) => setDraft(e.target.value)} />
          <div className="field">
            <button type="submit" className="primary">
              {c("search")}
            </button>
          </div>
          <Select
            label={t("type")}
            name="type"
            value={type}
            onChange={(v) => update({ type: v })}
            options={[
              { value: "", label: t("allTypes") },
              { value: "human", label: t("human") },
              { value: "machine", label: t("machine") },
            ]}
          />
          <Select
            label={c("state")}
            name="state"
            value={state}
            onChange={(v) => update({ state: v })}
            options={[
              { value: "", label: t("allStates") },
              { value: "active", label: c("active") },
              { value: "inactive", label: c("inactive") },
              { value: "locked", label: t("stateLocked") },
              { value: "initial", label: t("stateInitial") },
            ]}
          />
          <Select
            label={t("pageSize")}
            name="limit"
            value={String(limit)}
            onChange={(v) => update({ limit: v === "20" ? undefined : v })}
            options={limits.map((l) => ({ value: String(l), label: String(l) }))}
          />
        </form>
      </search>
      <ErrorText error={users.error ? errorOf(users.error) : undefined} />
      <DataTable
        caption={t("listCaption")}
        columns={columns}
        rows={users.data?.result}
        rowKey={(u) => u.details?.id ?? u.username}
        sort={{ column: sort, asc }}
        onSort={(column, a) => update({ sort: column === "username" ? undefined : column, asc: a ? undefined : "0" })}
        paging={{ offset, limit, total: Number(users.data?.details?.totalResult ?? 0n), onPage: (o) => update({ offset: o }) }}
        loading={users.isFetching}
      />
    </Page>
  );
}
