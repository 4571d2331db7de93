import { useMutation, useQuery } from "@connectrpc/connect-query";
import { keepPreviousData } from "@tanstack/react-query";
import { useState } from "react";
import type { GetProject, ProjectRole } from "../../../../gen/svc/resources/project/v3alpha/project_pb.js";
import { ProjectService } from "../../../../gen/svc/resources/project/v3alpha/project_service_pb.js";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/projects";
import {
  Card,
  CheckGroup,
  type Column,
  ConfirmButton,
  DialogForm,
  Field,
  type FormError,
  Modal,
  QueryTable,
  SearchField,
  Status,
  SubmitForm,
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
        <QueryTable
          list={list}
          error={action.error}
          caption={t("rolesCaption")}
          columns={columns}
          rowKey={(r) => r.key}
          sort={{ column: "key", asc }}
          onSort={(_, a) => paged.onSort("", a)}
          paging={paged.paging}
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
      <SubmitForm
        error={action.error}
        names={names}
        busy={action.busy}
        submitLabel={t("addRole")}
        status={action.status}
        onSubmit={async () => {
          const r = await action.run(() => add.mutateAsync({ projectId, role: { key, displayName, group } }), t("roleAdded", { key }));
          if (r) {
            setKey("");
            setDisplayName("");
            setGroup("");
          }
        }}
      >
        <Field label={t("roleKey")} name="role.key" value={key} onChange={(e) => setKey(e.target.value)} error={action.error} hint={t("roleKeyHint")} />
        <Field label={t("displayName")} name="role.display_name" value={displayName} onChange={(e) => setDisplayName(e.target.value)} error={action.error} />
        <Field label={t("group")} name="role.group" value={group} onChange={(e) => setGroup(e.target.value)} error={action.error} />
      </SubmitForm>
    </Card>
  );
}

function EditRole({ projectId, role, onDone }: { projectId: string; role: ProjectRole; onDone: (saved: boolean) => void }) {
  const t = useT(messages);
  const [displayName, setDisplayName] = useState(role.displayName);
  const [group, setGroup] = useState(role.group);
  const patch = useMutation(ProjectService.method.patchProjectRole);
  const action = useRun({ refresh: true });
  const names = ["role.display_name", "role.group"];
  return (
    <DialogForm
      error={action.error}
      names={names}
      busy={action.busy}
      onCancel={() => onDone(false)}
      onSubmit={async () => {
        const r = await action.run(() => patch.mutateAsync({ projectId, key: role.key, role: { displayName, group } }));
        if (r) onDone(true);
      }}
    >
      <Field label={t("displayName")} name="role.display_name" value={displayName} onChange={(e) => setDisplayName(e.target.value)} error={action.error} />
      <Field label={t("group")} name="role.group" value={group} onChange={(e) => setGroup(e.target.value)} error={action.error} />
    </DialogForm>
  );
}

/** All roles of a project, by key, for the role choices of grants (a project has at most a few hundred). */
export function useRoleOptions(projectId: string, enabled = true): RoleOption[] {
  const list = useQuery(ProjectService.method.searchProjectRoles, { projectId, query: { limit: 1000, asc: true } }, { enabled });
  return (list.data?.result ?? []).map((r) => ({ value: r.key, label: r.displayName ? `${r.displayName} (${r.key})` : r.key }));
}

export type RoleOption = { value: string; label: string };

/** The role keys of a grant as checkboxes ("grant.role_keys"); `emptyHint` says so when the project has no roles. */
export function RoleKeys({
  roles,
  selected,
  onChange,
  error,
  hint,
  emptyHint,
}: {
  roles: RoleOption[];
  selected: string[];
  onChange: (keys: string[]) => void;
  error: FormError;
  hint?: string;
  emptyHint?: boolean;
}) {
  const t = useT(messages);
  return (
    <CheckGroup
      legend={t("roles")}
      name="grant.role_keys"
      options={roles}
      selected={selected}
      onChange={onChange}
      error={error}
      hint={emptyHint ? (roles.length ? undefined : t("noRolesYet")) : hint}
    />
  );
}

/** A dialog's form that changes the role keys of a grant (of the project to an organisation, or to a user). */
export function EditRoleKeys({
  initial,
  roles,
  hint,
  save,
  onDone,
}: {
  initial: string[];
  roles: RoleOption[];
  hint?: string;
  save: (keys: string[]) => Promise<unknown>;
  onDone: (saved: boolean) => void;
}) {
  const [keys, setKeys] = useState(initial);
  const action = useRun({ refresh: true });
  return (
    <DialogForm
      error={action.error}
      names={["grant.role_keys"]}
      busy={action.busy}
      onCancel={() => onDone(false)}
      onSubmit={async () => {
        const r = await action.run(() => save(keys));
        if (r) onDone(true);
      }}
    >
      <RoleKeys roles={roles} selected={keys} onChange={setKeys} error={action.error} hint={hint} />
    </DialogForm>
  );
}
