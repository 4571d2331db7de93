// User grants of a project: which users hold which of its roles.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { keepPreviousData } from "@tanstack/react-query";
import { useState } from "react";
import type { GetProject } from "../../../../gen/svc/resources/project/v3alpha/project_pb.js";
import type { GetUser } from "../../../../gen/svc/resources/user/v3alpha/user_pb.js";
import { UserService } from "../../../../gen/svc/resources/user/v3alpha/user_service_pb.js";
import {
  type GetUserGrant,
  type UserGrantSearchFilterSchema,
  UserGrantService,
} from "../../../../gen/svc/resources/usergrant/v3alpha/user_grant_service_pb.js";
import { useAccess } from "../../access";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/projects";
import {
  Card,
  type Column,
  ConfirmButton,
  Field,
  Link,
  Modal,
  OrderSelect,
  QueryTable,
  SearchField,
  Select,
  Status,
  SubmitForm,
  useDate,
  useDebounced,
  useListState,
  useRun,
} from "../../ui";
import { useProjectCan } from "./project";
import { EditRoleKeys, RoleKeys, type RoleOption, useRoleOptions } from "./roles";

function userLabel(u: GetUser | undefined): string | undefined {
  if (!u) return undefined;
  const name = u.type.case === "human" ? u.type.value.profile?.displayName : u.type.case === "machine" ? u.type.value.name : "";
  return name && name !== u.username ? `${name} (${u.username})` : u.username;
}

export function UserGrants({ project }: { project: GetProject }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const can = useProjectCan(project);
  const access = useAccess();
  const date = useDate();
  const projectId = project.details?.id ?? "";
  const [userFilter, setUserFilter] = useState("");
  const userId = useDebounced(userFilter.trim());
  const [roleFilter, setRoleFilter] = useState("");
  const paged = useListState({ column: "", asc: false });
  const asc = paged.sort.asc;
  const [editing, setEditing] = useState<GetUserGrant>();
  const roles = useRoleOptions(projectId, can("project.role.read"));

  const filters: MessageInitShape<typeof UserGrantSearchFilterSchema>[] = [{ filter: { case: "projectId", value: projectId } }];
  if (userId) filters.push({ filter: { case: "userId", value: userId } });
  if (roleFilter) filters.push({ filter: { case: "roleKey", value: roleFilter } });
  const list = useQuery(UserGrantService.method.searchUserGrants, { query: paged.query, filters }, { placeholderData: keepPreviousData });
  const ids = [...new Set((list.data?.result ?? []).map((g) => g.grant?.userId ?? ""))].filter(Boolean);
  const users = useQuery(
    UserService.method.searchUsers,
    { query: { limit: ids.length }, filters: [{ filter: { case: "inIds", value: { ids } } }] },
    { enabled: ids.length > 0 && can("user.read") },
  );
  const userOf = (id: string) => users.data?.result.find((u) => u.details?.id === id);
  const who = (id: string) => userLabel(userOf(id)) ?? id;
  const remove = useMutation(UserGrantService.method.deleteUserGrant);
  const patch = useMutation(UserGrantService.method.patchUserGrant);
  const action = useRun({ refresh: true });

  const columns: Column<GetUserGrant>[] = [
    {
      key: "user",
      label: t("user"),
      render: (g) => {
        const id = g.grant?.userId ?? "";
        const owner = users.data?.result.find((u) => u.details?.id === id)?.details?.resourceOwner?.id ?? "";
        return access.inOrg("user.read", owner) ? <Link to={`/users/${id}`}>{who(id)}</Link> : who(id);
      },
    },
    { key: "roles", label: t("roles"), render: (g) => (g.grant?.roleKeys.length ? g.grant.roleKeys.join(", ") : t("noRoles")) },
    { key: "changed", label: c("changed"), render: (g) => date(g.details?.changeDate) },
  ];
  if (can("user.grant.write") || can("user.grant.delete")) {
    columns.push({
      key: "actions",
      label: c("actions"),
      render: (g) => {
        const name = who(g.grant?.userId ?? "");
        const short = userOf(g.grant?.userId ?? "")?.username ?? g.grant?.userId ?? "";
        const id = g.details?.id ?? "";
        return (
          <div className="buttons">
            {can("user.grant.write") && (
              <button type="button" onClick={() => setEditing(g)}>
                {t("changeRoles")}
                <span className="visually-hidden"> ({short})</span>
              </button>
            )}
            {can("user.grant.delete") && (
              <ConfirmButton
                label={`${c("remove")} (${short})`}
                question={t("confirmRemoveUserGrant", { user: name })}
                onConfirm={() => action.run(() => remove.mutateAsync({ id }), t("userGrantRemoved", { user: name }))}
              />
            )}
          </div>
        );
      },
    });
  }

  return (
    <>
      <Card title={t("userGrantsTitle")}>
        <search className="toolbar">
          <SearchField label={t("filterUserId")} name="filters.user_id" value={userFilter} onChange={paged.reset(setUserFilter)} />
          <Select
            label={t("filterRole")}
            name="filters.role_key"
            value={roleFilter}
            onChange={paged.reset(setRoleFilter)}
            options={[{ value: "", label: t("anyRole") }, ...roles]}
          />
          <OrderSelect label={t("order")} oldest={t("oldestFirst")} newest={t("newestFirst")} asc={asc} onChange={(a) => paged.onSort("", a)} newestFirst />
        </search>
        <QueryTable
          list={list}
          error={action.error}
          caption={t("userGrantsCaption")}
          columns={columns}
          rowKey={(g) => g.details?.id ?? ""}
          paging={paged.paging}
        />
        <Status text={action.status} />
      </Card>
      {can("user.grant.write") && <AddUserGrant projectId={projectId} roles={roles} />}
      <Modal
        title={t("changeUserRoles", { user: editing ? who(editing.grant?.userId ?? "") : "" })}
        open={editing !== undefined}
        onClose={() => setEditing(undefined)}
      >
        {editing && (
          <EditRoleKeys
            initial={editing.grant?.roleKeys ?? []}
            roles={roles}
            save={(roleKeys) => patch.mutateAsync({ id: editing.details?.id ?? "", grant: { roleKeys } })}
            onDone={(saved) => {
              setEditing(undefined);
              if (saved) action.setStatus(c("saved"));
            }}
          />
        )}
      </Modal>
    </>
  );
}

function AddUserGrant({ projectId, roles }: { projectId: string; roles: RoleOption[] }) {
  const t = useT(messages);
  const [userId, setUserId] = useState("");
  const [keys, setKeys] = useState<string[]>([]);
  const create = useMutation(UserGrantService.method.createUserGrant);
  const action = useRun({ refresh: true });
  return (
    <Card title={t("newUserGrant")}>
      <SubmitForm
        error={action.error}
        names={["grant.user_id", "grant.role_keys"]}
        busy={action.busy}
        submitLabel={t("addUserGrant")}
        status={action.status}
        onSubmit={async () => {
          const r = await action.run(() => create.mutateAsync({ grant: { userId: userId.trim(), projectId, roleKeys: keys } }), t("userGrantAdded"));
          if (r) {
            setUserId("");
            setKeys([]);
          }
        }}
      >
        <Field
          label={t("userId")}
          name="grant.user_id"
          value={userId}
          onChange={(e) => setUserId(e.target.value)}
          error={action.error}
          hint={t("userIdHint")}
        />
        <RoleKeys roles={roles} selected={keys} onChange={setKeys} error={action.error} emptyHint />
      </SubmitForm>
    </Card>
  );
}
