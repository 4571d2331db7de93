import { timestampDate } from "@bufbuild/protobuf/wkt";
import { useQuery } from "@connectrpc/connect-query";
import { useState } from "react";
import { type GetIDP, IDPFieldName } from "../../../../gen/svc/resources/idp/v3alpha/idp_pb.js";
import { IdentityProviderService } from "../../../../gen/svc/resources/idp/v3alpha/idp_service_pb.js";
import { State, StatePolicy, TextFilterMethod } from "../../../../gen/svc/resources/object/v3alpha/object_pb.js";
import { orgCtx, useAccess, useCan, useOrg } from "../../access";
import { formatDate, useLanguage, useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/idps";
import { navigate } from "../../router";
import { type Column, Link, Page, QueryTable, SearchField, StateSelect, useListState } from "../../ui";
import { ownerName } from "./form";
import { kindByType } from "./kinds";

/** May the user create a provider anywhere: in this organisation, the instance or the system. */
export function useCreateTargets() {
  const can = useCan();
  const access = useAccess();
  return { org: can("idp.write"), instance: access.everywhere("idp.write"), system: access.inSystem("idp.write") };
}

export function IdpList() {
  const t = useT(messages);
  const c = useT(coreMessages);
  const lang = useLanguage();
  const { orgId } = useOrg();
  const targets = useCreateTargets();
  const [text, setText] = useState("");
  const [state, setState] = useState("");
  const paged = useListState({ column: "", asc: false });
  const sort = paged.sort;
  const filters = [
    ...(text.trim() ? [{ filter: { case: "name" as const, value: { name: text.trim(), method: TextFilterMethod.CONTAINS_IGNORE_CASE } } }] : []),
    ...(state
      ? [{ filter: { case: "state" as const, value: { state: state === "active" ? State.EFFECTIVE_STATE_ACTIVE : State.EFFECTIVE_STATE_INACTIVE } } }]
      : []),
  ];
  const list = useQuery(IdentityProviderService.method.searchIDPs, {
    ctx: orgCtx(orgId),
    query: paged.query,
    sortingColumn: sort.column === "name" ? IDPFieldName.IDP_FIELD_NAME_NAME : IDPFieldName.IDP_FIELD_NAME_UNSPECIFIED,
    filters,
  });
  const policyText = (p: StatePolicy | undefined) =>
    p === StatePolicy.INHERIT ? t("policyInheritShort") : p === StatePolicy.DEACTIVATE ? t("policyDeactivate") : t("policyActivate");
  const columns: Column<GetIDP>[] = [
    {
      key: "name",
      label: t("name"),
      sort: "name",
      render: (r) => <Link to={`/idps/${r.details?.id ?? ""}`}>{r.idp?.name || r.details?.id}</Link>,
    },
    {
      key: "kind",
      label: t("kind"),
      render: (r) => {
        const k = kindByType(r.type);
        return k ? t(k.label) : t("kindUnknown");
      },
    },
    { key: "owner", label: t("definedIn"), render: (r) => ownerName(t, r.details?.resourceOwner, orgId) },
    { key: "state", label: t("stateHere"), render: (r) => (r.state === State.EFFECTIVE_STATE_ACTIVE ? c("active") : c("inactive")) },
    { key: "policy", label: t("policyHere"), render: (r) => policyText(r.idp?.statePolicy) },
    {
      key: "changed",
      label: c("changed"),
      render: (r) => formatDate(lang, r.details?.changeDate ? timestampDate(r.details.changeDate) : undefined),
    },
  ];
  return (
    <Page
      title={t("title")}
      actions={
        (targets.org || targets.instance || targets.system) && (
          <button type="button" className="primary" onClick={() => navigate("/idps/new")}>
            {t("createProvider")}
          </button>
        )
      }
    >
      <p>{t("intro")}</p>
      <search className="toolbar">
        <SearchField label={t("searchName")} name="filters.name" value={text} onChange={paged.reset(setText)} />
        <StateSelect label={t("stateFilter")} name="filters.state" all={t("stateAll")} value={state} onChange={paged.reset(setState)} />
      </search>
      <QueryTable
        list={list}
        caption={t("caption")}
        columns={columns}
        rowKey={(r) => r.details?.id ?? ""}
        sort={sort}
        onSort={paged.onSort}
        paging={paged.paging}
      />
    </Page>
  );
}
