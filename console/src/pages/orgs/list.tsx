import type { MessageInitShape } from "@bufbuild/protobuf";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { keepPreviousData } from "@tanstack/react-query";
import { useState } from "react";
import { TextFilterMethod } from "../../../../gen/svc/resources/object/v3alpha/object_pb.js";
import {
  type GetOrganization,
  OrganizationFieldName,
  type OrganizationSearchFilterSchema,
  OrganizationState,
} from "../../../../gen/svc/resources/org/v3alpha/org_pb.js";
import { OrganizationService } from "../../../../gen/svc/resources/org/v3alpha/org_service_pb.js";
import { useAccess, useOrg } from "../../access";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/orgs";
import { navigate } from "../../router";
import { type Column, DialogForm, Field, Link, Modal, Page, QueryTable, SearchField, StateSelect, useDate, useDebounced, useListState, useRun } from "../../ui";

export function OrgList() {
  const t = useT(messages);
  const c = useT(coreMessages);
  const access = useAccess();
  const { orgId } = useOrg();
  const date = useDate();
  const [search, setSearch] = useState("");
  const text = useDebounced(search.trim());
  const [state, setState] = useState("");
  const paged = useListState({ column: String(OrganizationFieldName.NAME), asc: true });
  const sort = paged.sort;
  const [creating, setCreating] = useState(false);

  const filters: MessageInitShape<typeof OrganizationSearchFilterSchema>[] = [];
  if (text) filters.push({ filter: { case: "name", value: { name: text, method: TextFilterMethod.CONTAINS_IGNORE_CASE } } });
  if (state) filters.push({ filter: { case: "state", value: { state: Number(state) } } });
  const list = useQuery(
    OrganizationService.method.searchOrganizations,
    { query: paged.query, sortingColumn: Number(sort.column), filters },
    { placeholderData: keepPreviousData },
  );

  const columns: Column<GetOrganization>[] = [
    {
      key: "name",
      label: c("name"),
      sort: String(OrganizationFieldName.NAME),
      render: (o) => <Link to={`/orgs/${o.details?.id}`}>{o.name}</Link>,
    },
    { key: "domain", label: t("primaryDomain"), render: (o) => o.primaryDomain },
    {
      key: "state",
      label: c("state"),
      render: (o) => (
        <>
          {o.state === OrganizationState.INACTIVE ? c("inactive") : c("active")}
          {o.isInstanceDefault && <>, {t("isDefault")}</>}
          {o.details?.id === orgId && <>, {t("current")}</>}
        </>
      ),
    },
    { key: "id", label: c("id"), sort: String(OrganizationFieldName.ID), render: (o) => o.details?.id },
    { key: "changed", label: c("changed"), sort: String(OrganizationFieldName.CHANGE_DATE), render: (o) => date(o.details?.changeDate) },
  ];

  return (
    <Page
      title={t("title")}
      actions={
        access.everywhere("org.create") && (
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            {t("newOrg")}
          </button>
        )
      }
    >
      <search className="toolbar">
        <SearchField label={t("searchName")} name="filters.name.name" value={search} onChange={paged.reset(setSearch)} />
        <StateSelect
          label={c("state")}
          name="filters.state.state"
          all={t("allStates")}
          value={state}
          onChange={paged.reset(setState)}
          active={String(OrganizationState.ACTIVE)}
          inactive={String(OrganizationState.INACTIVE)}
        />
      </search>
      <QueryTable
        list={list}
        caption={t("listCaption")}
        columns={columns}
        rowKey={(o) => o.details?.id ?? ""}
        sort={sort}
        onSort={paged.onSort}
        paging={paged.paging}
      />
      <Modal title={t("newOrg")} open={creating} onClose={() => setCreating(false)}>
        <CreateOrg onDone={() => setCreating(false)} />
      </Modal>
    </Page>
  );
}

function CreateOrg({ onDone }: { onDone: () => void }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const [name, setName] = useState("");
  const create = useMutation(OrganizationService.method.createOrganization);
  const action = useRun({ refresh: true });
  return (
    <DialogForm
      error={action.error}
      names={["organization.name"]}
      busy={action.busy}
      submitLabel={c("create")}
      onCancel={onDone}
      onSubmit={async () => {
        const r = await action.run(() => create.mutateAsync({ organization: { name } }));
        if (r?.details?.id) {
          onDone();
          navigate(`/orgs/${r.details.id}`);
        }
      }}
    >
      <Field label={c("name")} name="organization.name" value={name} onChange={(e) => setName(e.target.value)} error={action.error} hint={t("nameHint")} />
    </DialogForm>
  );
}
