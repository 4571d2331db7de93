import { useMutation, useQuery } from "@connectrpc/connect-query";
import { keepPreviousData } from "@tanstack/react-query";
import { useState } from "react";
import type { GetProject, ProjectRole } from "../../../../gen/svc/resources/project/v3alpha/project_pb.js";
import { ProjectService } from "../../../../gen/svc/resources/project/v3alpha/project_service_pb.js";
import { errorOf } from "../../api";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/projects";
import {
  Card,
  type Column,
  ConfirmButton,
  DataTable,
  ErrorText,
  Field,
  FormErrorText,
  Modal,
  SearchField,
  Status,
  useDebounced,
  useListState,
  useRun,
} from "../../ui";
import { useProjectCan } from "./project";

export function Roles({ project }: { project: GetProject }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const can = useProjectCan(project);
  const projectId = project.details?.id ?? "";
  const [search, setSearch] = useState("");
  const prefix = useDebounced(search.trim());
  const paged = useListState({ column: "", asc: true });
  const asc = paged.sort.asc;
  const [editing, setEditing] = useState<ProjectRole>();
  const list = useQuery(ProjectService.method.searchProjectRoles, { projectId, query: paged.query, keyPrefix: prefix }, { placeholderData: keepPreviousData });
  const remove = useMutation(ProjectService.method.removeProjectRole);
  const action = useRun({ refresh: true });

  const columns: Column<ProjectRole>[] = [
    { key: "key", label: t("roleKey"), sort: "key", render: (r) => <code>{r.key}</code> },
    { key: "name", label: t("displayName"), render: (r) => r.displayName },
    { key: "group", label: t("group"), render: (r) => r.group },
  ];
  if (can("project.role.write") || can("project.role.delete")) {
    columns.push({
      key: "actions",
      label: c("actions"),
      render: (r) => (
        <div className="buttons">
          {can("project.role.write") && (
            <button type="button" onClick={() => setEditing(r)}>
              {t("change")}
              <span className="visually-hidden"> {r.key}</span>
            </button>
          )}
          {can("project.role.delete") && (
            <ConfirmButton
              label={`${c("remove")} ${r.key}`}
              question={t("confirmRemoveRole", { key: r.key })}
              onConfirm={() => action.run(() => remove.mutateAsync({ projectId, key: r.key }), t("roleRemoved", { key: r.key }))}
            />
          )}
        </div>
      ),
    });
  }

  return (
    <>
      <Card title={t("rolesTitle")}>
        <search className="toolbar">
          <SearchField label={t("searchKey")} name="key_prefix" value={search} onChange={paged.reset(setSearch)} />
        </search>
        {list.isError && <ErrorText error={errorOf(list.error)} />}
        <ErrorText error={action.error} />
        <DataTable
          caption={t("rolesCaption")}
          columns={columns}
          rows={list.data?.result}
          rowKey={(r) => r.key}
          sort={{ column: "key", asc }}
          onSort={(_, a) => paged.onSort("", a)}
          paging={paged.paging(list.data?.details?.totalResult)}
          loading={list.isFetching}
        />
        <Status text={action.status} />
      </Card>
      {can("project.role.write") && <AddRole projectId={projectId} />}
      <Modal title={t("changeRole", { key: editing?.key ?? "" })} open={editing !== undefined} onClose={() => setEditing(undefined)}>
        {editing && (
          <EditRole
            projectId={projectId}
            role={editing}
            onDone={(saved) => {
              setEditing(undefined);
              if (saved) action.setStatus(t("roleSaved", { key: editing.key }));
            }}
          />
        )}
      </Modal>
    </>
  );
}

function AddRole({ projectId }: { projectId: string }) {
  const t = useT(messages);
  const [key, setKey] = useState("");
  const [displayName, setDisplayName] = useState("");
  const [group, setGroup] = useState("");
  const add = useMutation(ProjectService.method.addProjectRole);
  const action = useRun({ refresh: true });
  const names = ["role.key", "role.display_name", "role.group"];
  return (
    <Card title={t("addRole")}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const r = await action.run(() => add.mutateAsync({ projectId, role: { key, displayName, group } }), t("roleAdded", { key }));
          if (r) {
            setKey("");
            setDisplayName("");
            setGroup("");
          }
        }}
      >
        <FormErrorText error={action.error} names={names} />
        <Field label={t("roleKey")} name="role.key" value={key} onChange={(e) => setKey(e.target.value)} error={action.error} hint={t("roleKeyHint")} />
        <Field label={t("displayName")} name="role.display_name" value={displayName} onChange={(e) => setDisplayName(e.target.value)} error={action.error} />
        <Field label={t("group")} name="role.group" value={group} onChange={(e) => setGroup(e.target.value)} error={action.error} />
        <div className="buttons">
          <button type="submit" className="primary" disabled={action.busy}>
            {t("addRole")}
          </button>
        </div>
        <Status text={action.status} />
      </form>
    </Card>
  );
}

function EditRole({ projectId, role, onDone }: { projectId: string; role: ProjectRole; onDone: (saved: boolean) => void }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const [displayName, setDisplayName] = useState(role.displayName);
  const [group, setGroup] = useState(role.group);
  const patch = useMutation(ProjectService.method.patchProjectRole);
  const action = useRun({ refresh: true });
  const names = ["role.display_name", "role.group"];
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        const r = await action.run(() => patch.mutateAsync({ projectId, key: role.key, role: { displayName, group } }));
        if (r) onDone(true);
      }}
    >
      <FormErrorText error={action.error} names={names} />
      <Field label={t("displayName")} name="role.display_name" value={displayName} onChange={(e) => setDisplayName(e.target.value)} error={action.error} />
      <Field label={t("group")} name="role.group" value={group} onChange={(e) => setGroup(e.target.value)} error={action.error} />
      <div className="buttons">
        <button type="button" onClick={() => onDone(false)}>
          {c("cancel")}
        </button>
        <button type="submit" className="primary" disabled={action.busy}>
          {c("save")}
        </button>
      </div>
    </form>
  );
}

/** All roles of a project, by key, for the role choices of grants (a project has at most a few hundred). */
export function useRoleOptions(projectId: string, enabled = true): { value: string; label: string }[] {
  const list = useQuery(ProjectService.method.searchProjectRoles, { projectId, query: { limit: 1000, asc: true } }, { enabled });
  return (list.data?.result ?? []).map((r) => ({ value: r.key, label: r.displayName ? `${r.displayName} (${r.key})` : r.key }));
}
