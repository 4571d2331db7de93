// Project grants: the project granted to other organisations with some of its roles.
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { keepPreviousData } from "@tanstack/react-query";
import { useState } from "react";
import { State } from "../../../../gen/svc/resources/object/v3alpha/object_pb.js";
import { OrganizationFieldName } from "../../../../gen/svc/resources/org/v3alpha/org_pb.js";
import { OrganizationService } from "../../../../gen/svc/resources/org/v3alpha/org_service_pb.js";
import type { GetProject } from "../../../../gen/svc/resources/project/v3alpha/project_pb.js";
import { type GetProjectGrant, ProjectService } from "../../../../gen/svc/resources/project/v3alpha/project_service_pb.js";
import { useAccess } from "../../access";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/projects";
import { Card, type Column, ConfirmButton, Field, Link, Modal, OrderSelect, QueryTable, Select, Status, SubmitForm, useListState, useRun } from "../../ui";
import { useProjectCan } from "./project";
import { EditRoleKeys, RoleKeys, type RoleOption, useRoleOptions } from "./roles";

export function Grants({ project }: { project: GetProject }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const can = useProjectCan(project);
  const access = useAccess();
  const projectId = project.details?.id ?? "";
  const ownOrg = project.details?.resourceOwner?.id ?? "";
  const paged = useListState({ column: "", asc: true });
  const asc = paged.sort.asc;
  const [editing, setEditing] = useState<GetProjectGrant>();
  const list = useQuery(
    ProjectService.method.searchProjectGrants,
    { query: paged.query, filters: [{ filter: { case: "projectId", value: projectId } }] },
    { placeholderData: keepPreviousData },
  );
  const ids = [...new Set((list.data?.result ?? []).map((g) => g.grantedOrganizationId))];
  const orgs = useQuery(
    OrganizationService.method.searchOrganizations,
    { query: { limit: ids.length }, filters: [{ filter: { case: "inIds", value: { ids } } }] },
    { enabled: ids.length > 0 },
  );
  const orgName = (id: string) => orgs.data?.result.find((o) => o.details?.id === id)?.name;
  const roles = useRoleOptions(projectId, can("project.role.read"));
  const deactivate = useMutation(ProjectService.method.deactivateProjectGrant);
  const reactivate = useMutation(ProjectService.method.reactivateProjectGrant);
  const remove = useMutation(ProjectService.method.deleteProjectGrant);
  const patch = useMutation(ProjectService.method.patchProjectGrant);
  const action = useRun({ refresh: true });

  const columns: Column<GetProjectGrant>[] = [
    {
      key: "org",
      label: t("grantedOrg"),
      render: (g) => {
        const name = orgName(g.grantedOrganizationId);
        const label = name ? `${name} (${g.grantedOrganizationId})` : g.grantedOrganizationId;
        return access.inOrg("org.read", g.grantedOrganizationId) ? <Link to={`/orgs/${g.grantedOrganizationId}`}>{label}</Link> : label;
      },
    },
    { key: "roles", label: t("roles"), render: (g) => (g.roleKeys.length ? g.roleKeys.join(", ") : t("noRoles")) },
    { key: "state", label: c("state"), render: (g) => (g.state === State.EFFECTIVE_STATE_INACTIVE ? c("inactive") : c("active")) },
  ];
  if (can("project.grant.write") || can("project.grant.delete")) {
    columns.push({
      key: "actions",
      label: c("actions"),
      render: (g) => {
        const who = orgName(g.grantedOrganizationId) ?? g.grantedOrganizationId;
        const ref = { projectId, grantId: g.id };
        return (
          <div className="buttons">
            {can("project.grant.write") && (
              <button type="button" onClick={() => setEditing(g)}>
                {t("changeRoles")}
                <span className="visually-hidden"> ({who})</span>
              </button>
            )}
            {can("project.grant.write") &&
              (g.state === State.EFFECTIVE_STATE_INACTIVE ? (
                <button type="button" onClick={() => action.run(() => reactivate.mutateAsync(ref), t("grantReactivated", { org: who }))}>
                  {c("reactivate")}
                  <span className="visually-hidden"> ({who})</span>
                </button>
              ) : (
                <ConfirmButton
                  label={`${c("deactivate")} (${who})`}
                  question={t("confirmDeactivateGrant", { org: who })}
                  onConfirm={() => action.run(() => deactivate.mutateAsync(ref), t("grantDeactivated", { org: who }))}
                />
              ))}
            {can("project.grant.delete") && (
              <ConfirmButton
                label={`${c("delete")} (${who})`}
                question={t("confirmDeleteGrant", { org: who })}
                onConfirm={() => action.run(() => remove.mutateAsync(ref), t("grantDeleted", { org: who }))}
              />
            )}
          </div>
        );
      },
    });
  }

  return (
    <>
      <Card title={t("grantsTitle")}>
        <p className="hint">{t("grantsIntro")}</p>
        <div className="toolbar">
          <OrderSelect label={t("order")} oldest={t("oldestFirst")} newest={t("newestFirst")} asc={asc} onChange={(a) => paged.onSort("", a)} />
        </div>
        <QueryTable list={list} error={action.error} caption={t("grantsCaption")} columns={columns} rowKey={(g) => g.id} paging={paged.paging} />
        <Status text={action.status} />
      </Card>
      {can("project.grant.write") && <CreateGrant projectId={projectId} ownOrg={ownOrg} roles={roles} />}
      <Modal
        title={t("changeGrantRoles", { org: editing ? (orgName(editing.grantedOrganizationId) ?? editing.grantedOrganizationId) : "" })}
        open={editing !== undefined}
        onClose={() => setEditing(undefined)}
      >
        {editing && (
          <EditRoleKeys
            initial={editing.roleKeys}
            roles={roles}
            hint={t("grantRolesHint")}
            save={(roleKeys) => patch.mutateAsync({ projectId: editing.projectId, grantId: editing.id, grant: { roleKeys } })}
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

function CreateGrant({ projectId, ownOrg, roles }: { projectId: string; ownOrg: string; roles: RoleOption[] }) {
  const t = useT(messages);
  const access = useAccess();
  const [org, setOrg] = useState("");
  const [keys, setKeys] = useState<string[]>([]);
  const create = useMutation(ProjectService.method.createProjectGrant);
  const action = useRun({ refresh: true });
  // the organisations to choose from, where the user may read them all; else the ID is typed
  const orgs = useQuery(
    OrganizationService.method.searchOrganizations,
    { query: { limit: 200, asc: true }, sortingColumn: OrganizationFieldName.NAME },
    { enabled: access.everywhere("org.read") },
  );
  const choices = (orgs.data?.result ?? []).filter((o) => o.details?.id !== ownOrg);
  const pick = orgs.data && Number(orgs.data.details?.totalResult ?? 0) <= 200 && choices.length > 0;
  const names = ["grant.granted_organization_id", "grant.role_keys"];
  return (
    <Card title={t("newGrant")}>
      <SubmitForm
        error={action.error}
        names={names}
        busy={action.busy}
        submitLabel={t("grantProject")}
        status={action.status}
        onSubmit={async () => {
          const r = await action.run(() => create.mutateAsync({ projectId, grant: { grantedOrganizationId: org.trim(), roleKeys: keys } }), t("grantCreated"));
          if (r) {
            setOrg("");
            setKeys([]);
          }
        }}
      >
        {pick ? (
          <Select
            label={t("grantedOrg")}
            name="grant.granted_organization_id"
            value={org}
            onChange={setOrg}
            error={action.error}
            options={[{ value: "", label: t("chooseOrg") }, ...choices.map((o) => ({ value: o.details?.id ?? "", label: o.name }))]}
          />
        ) : (
          <Field label={t("grantedOrgId")} name="grant.granted_organization_id" value={org} onChange={(e) => setOrg(e.target.value)} error={action.error} />
        )}
        <RoleKeys roles={roles} selected={keys} onChange={setKeys} error={action.error} emptyHint />
      </SubmitForm>
    </Card>
  );
}
