import type { MessageInitShape } from "@bufbuild/protobuf";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { keepPreviousData } from "@tanstack/react-query";
import { useState } from "react";
import { TextFilterMethod } from "../../../../gen/svc/resources/object/v3alpha/object_pb.js";
import { type GetProject, ProjectFieldName, type ProjectSearchFilterSchema, ProjectState } from "../../../../gen/svc/resources/project/v3alpha/project_pb.js";
import { ProjectService } from "../../../../gen/svc/resources/project/v3alpha/project_service_pb.js";
import { orgCtx, useCan, useOrg } from "../../access";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/projects";
import { navigate } from "../../router";
import { Checkbox, type Column, DialogForm, Field, Link, Modal, Page, QueryTable, SearchField, useDate, useDebounced, useListState, useRun } from "../../ui";
import { YesNo } from "./kit";

export function ProjectList() {
  const t = useT(messages);
  const c = useT(coreMessages);
  const can = useCan();
  const { orgId } = useOrg();
  const date = useDate();
  const [search, setSearch] = useState("");
  const text = useDebounced(search.trim());
  const paged = useListState({ column: String(ProjectFieldName.NAME), asc: true });
  const sort = paged.sort;
  const [creating, setCreating] = useState(false);

  const filters: MessageInitShape<typeof ProjectSearchFilterSchema>[] = [];
  if (text) filters.push({ filter: { case: "name", value: { name: text, method: TextFilterMethod.CONTAINS_IGNORE_CASE } } });
  const list = useQuery(
    ProjectService.method.searchProjects,
    { ctx: orgCtx(orgId), query: paged.query, sortingColumn: Number(sort.column), filters },
    { placeholderData: keepPreviousData, enabled: !!orgId },
  );

  const columns: Column<GetProject>[] = [
    {
      key: "name",
      label: c("name"),
      sort: String(ProjectFieldName.NAME),
      render: (p) => <Link to={`/projects/${p.details?.id}`}>{p.project?.name}</Link>,
    },
    { key: "state", label: c("state"), render: (p) => (p.state === ProjectState.INACTIVE ? c("inactive") : c("active")) },
    { key: "check", label: t("roleCheckShort"), render: (p) => <YesNo value={!!p.project?.projectRoleCheck} /> },
    { key: "id", label: c("id"), sort: String(ProjectFieldName.ID), render: (p) => p.details?.id },
    { key: "changed", label: c("changed"), sort: String(ProjectFieldName.CHANGE_DATE), render: (p) => date(p.details?.changeDate) },
  ];

  return (
    <Page
      title={t("title")}
      actions={
        can("project.write") && (
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            {t("newProject")}
          </button>
        )
      }
    >
      <search className="toolbar">
        <SearchField label={t("searchName")} name="filters.name.name" value={search} onChange={paged.reset(setSearch)} />
      </search>
      <QueryTable
        list={list}
        caption={t("listCaption")}
        columns={columns}
        rowKey={(p) => p.details?.id ?? ""}
        sort={sort}
        onSort={paged.onSort}
        paging={paged.paging}
      />
      <Modal title={t("newProject")} open={creating} onClose={() => setCreating(false)}>
        <CreateProject orgId={orgId} onDone={() => setCreating(false)} />
      </Modal>
    </Page>
  );
}

function CreateProject({ orgId, onDone }: { orgId: string; onDone: () => void }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const [name, setName] = useState("");
  const [assertion, setAssertion] = useState(false);
  const [check, setCheck] = useState(false);
  const create = useMutation(ProjectService.method.createProject);
  const action = useRun({ refresh: true });
  return (
    <DialogForm
      error={action.error}
      names={["project.name"]}
      busy={action.busy}
      submitLabel={c("create")}
      onCancel={onDone}
      onSubmit={async () => {
        const r = await action.run(() =>
          create.mutateAsync({ ctx: orgCtx(orgId), project: { name, projectRoleAssertion: assertion, projectRoleCheck: check } }),
        );
        if (r?.details?.id) {
          onDone();
          navigate(`/projects/${r.details.id}`);
        }
      }}
    >
      <Field label={c("name")} name="project.name" value={name} onChange={(e) => setName(e.target.value)} error={action.error} hint={t("nameHint")} />
      <Checkbox label={t("roleAssertion")} name="project.project_role_assertion" checked={assertion} onChange={setAssertion} />
      <Checkbox label={t("roleCheck")} name="project.project_role_check" checked={check} onChange={setCheck} />
    </DialogForm>
  );
}
