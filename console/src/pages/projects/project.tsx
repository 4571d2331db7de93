import { useMutation, useQuery } from "@connectrpc/connect-query";
import { type ReactNode, useState } from "react";
import { type GetProject, ProjectState } from "../../../../gen/svc/resources/project/v3alpha/project_pb.js";
import { ProjectService } from "../../../../gen/svc/resources/project/v3alpha/project_service_pb.js";
import { useAccess } from "../../access";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/projects";
import { navigate } from "../../router";
import { BackLink, Card, Checkbox, Field, Missing, Page, SubmitForm, Tabs, useDate, useRun } from "../../ui";

import { StateCard } from "./kit";
/** A permission for a project: in its organisation (or everywhere), or through a membership in the project itself. */
export function useProjectCan(project: GetProject): (permission: string) => boolean {
  const access = useAccess();
  const id = project.details?.id ?? "";
  const orgId = project.details?.resourceOwner?.id ?? "";
  return (permission) =>
    access.inOrg(permission, orgId) ||
    access.memberships.some((m) => m.context.case === "projectId" && m.context.value === id && m.permissions.includes(permission));
}

/** Loads a project; shows its name as the page title and its tabs, or (for a page below a tab) only what it is given. */
export function ProjectFrame({ id, tab, child, children }: { id: string; tab: string; child?: boolean; children: (p: GetProject) => ReactNode }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const got = useQuery(ProjectService.method.getProject, { id });
  const project = got.data?.project;
  if (got.isError) {
    return <Missing title={t("title")} error={got.error} back="/projects" backLabel={t("backToList")} />;
  }
  if (!project) return <p role="status">{c("loading")}</p>;
  if (child) return <>{children(project)}</>;
  return (
    <Page title={project.project?.name ?? id}>
      <BackLink to="/projects" label={t("backToList")} />
      <ProjectTabs project={project} current={tab} />
      {children(project)}
    </Page>
  );
}

export function ProjectTabs({ project, current }: { project: GetProject; current: string }) {
  const t = useT(messages);
  const can = useProjectCan(project);
  const base = `/projects/${project.details?.id}`;
  const tabs = [{ to: base, label: t("tabSettings") }];
  if (can("project.role.read")) tabs.push({ to: `${base}/roles`, label: t("tabRoles") });
  if (can("project.app.read")) tabs.push({ to: `${base}/apps`, label: t("tabApps") });
  if (can("project.grant.read")) tabs.push({ to: `${base}/grants`, label: t("tabGrants") });
  if (can("user.grant.read")) tabs.push({ to: `${base}/user-grants`, label: t("tabUserGrants") });
  return <Tabs label={t("projectParts")} tabs={tabs} current={current ? `${base}/${current}` : base} />;
}

export function Settings({ project }: { project: GetProject }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const date = useDate();
  const can = useProjectCan(project);
  const id = project.details?.id ?? "";
  const active = project.state !== ProjectState.INACTIVE;
  const deactivate = useMutation(ProjectService.method.deactivateProject);
  const reactivate = useMutation(ProjectService.method.reactivateProject);
  const remove = useMutation(ProjectService.method.deleteProject);
  return (
    <>
      <Card title={c("details")}>
        <dl className="props">
          <dt>{c("id")}</dt>
          <dd>{id}</dd>
          <dt>{c("state")}</dt>
          <dd>{active ? c("active") : c("inactive")}</dd>
          <dt>{c("changed")}</dt>
          <dd>{date(project.details?.changeDate)}</dd>
        </dl>
      </Card>
      {can("project.write") ? (
        <EditProject project={project} />
      ) : (
        <Card title={t("settingsTitle")}>
          <dl className="props">
            <dt>{t("roleAssertion")}</dt>
            <dd>{project.project?.projectRoleAssertion ? t("yes") : t("no")}</dd>
            <dt>{t("roleCheck")}</dt>
            <dd>{project.project?.projectRoleCheck ? t("yes") : t("no")}</dd>
          </dl>
        </Card>
      )}
      <StateCard
        active={active}
        canWrite={can("project.write")}
        canDelete={can("project.delete")}
        questions={{
          deactivate: t("confirmDeactivateProject", { name: project.project?.name ?? id }),
          delete: t("confirmDeleteProject", { name: project.project?.name ?? id }),
        }}
        deactivate={() => deactivate.mutateAsync({ id })}
        reactivate={() => reactivate.mutateAsync({ id })}
        remove={() => remove.mutateAsync({ id })}
        deleted={() => navigate("/projects")}
      />
    </>
  );
}

function EditProject({ project }: { project: GetProject }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const [name, setName] = useState(project.project?.name ?? "");
  const [assertion, setAssertion] = useState(!!project.project?.projectRoleAssertion);
  const [check, setCheck] = useState(!!project.project?.projectRoleCheck);
  const patch = useMutation(ProjectService.method.patchProject);
  const action = useRun({ refresh: true });
  const names = ["project.name", "project.project_role_assertion", "project.project_role_check"];
  return (
    <Card title={t("settingsTitle")}>
      <SubmitForm
        error={action.error}
        names={names}
        busy={action.busy}
        submitLabel={c("save")}
        status={action.status}
        onSubmit={() =>
          action.run(
            () => patch.mutateAsync({ id: project.details?.id ?? "", project: { name, projectRoleAssertion: assertion, projectRoleCheck: check } }),
            c("saved"),
          )
        }
      >
        <Field label={c("name")} name="project.name" value={name} onChange={(e) => setName(e.target.value)} error={action.error} hint={t("nameHint")} />
        <Checkbox label={t("roleAssertion")} name="project.project_role_assertion" checked={assertion} onChange={setAssertion} />
        <p className="hint">{t("roleAssertionHint")}</p>
        <Checkbox label={t("roleCheck")} name="project.project_role_check" checked={check} onChange={setCheck} />
        <p className="hint">{t("roleCheckHint")}</p>
      </SubmitForm>
    </Card>
  );
}
