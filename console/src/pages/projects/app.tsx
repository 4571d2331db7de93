import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useState } from "react";
import { ApplicationState, type GetApplication } from "../../../../gen/svc/resources/application/v3alpha/application_pb.js";
import { ApplicationService } from "../../../../gen/svc/resources/application/v3alpha/application_service_pb.js";
import type { GetProject } from "../../../../gen/svc/resources/project/v3alpha/project_pb.js";
import { errorOf } from "../../api";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/projects";
import { navigate } from "../../router";
import { Card, ConfirmButton, ErrorText, Link, Page, SecretModal, Status, SubmitForm, useDate, useRun } from "../../ui";
import { AppFields, appFieldNames, appState, stateUsesSecret, useAppForm, usesKeys, usesSecret } from "./app-form";
import { AppKeys } from "./app-keys";
import { useKindLabel } from "./apps";
import { StateCard, YesNo } from "./kit";
import { ProjectTabs, useProjectCan } from "./project";

export function AppPage({ project, id }: { project: GetProject; id: string }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const got = useQuery(ApplicationService.method.getApplication, { id });
  const app = got.data?.application;
  const projectPath = `/projects/${project.details?.id}`;
  if (got.isError || (app && app.projectId !== project.details?.id)) {
    return (
      <Page title={c("notFound")}>
        {got.isError && <ErrorText error={errorOf(got.error)} />}
        <p>
          <Link to={`${projectPath}/apps`}>{t("backToApps")}</Link>
        </p>
      </Page>
    );
  }
  if (!app) return <p role="status">{c("loading")}</p>;
  return <AppView project={project} app={app} />;
}

function AppView({ project, app }: { project: GetProject; app: GetApplication }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const date = useDate();
  const can = useProjectCan(project);
  const kindLabel = useKindLabel();
  const id = app.details?.id ?? "";
  const projectPath = `/projects/${project.details?.id}`;
  const active = app.state !== ApplicationState.INACTIVE;
  const deactivate = useMutation(ApplicationService.method.deactivateApplication);
  const reactivate = useMutation(ApplicationService.method.reactivateApplication);
  const remove = useMutation(ApplicationService.method.deleteApplication);
  const secret = useMutation(ApplicationService.method.generateApplicationSecret);
  const addKey = useMutation(ApplicationService.method.addApplicationKey);
  const credentials = useRun({ refresh: true });
  const [shown, setShown] = useState<{ title: string; value: string }>();
  const name = app.application?.name ?? id;

  return (
    <Page title={name}>
      <p>
        <Link to={`${projectPath}/apps`}>{t("backToAppsOf", { project: project.project?.name ?? "" })}</Link>
      </p>
      <ProjectTabs project={project} current="apps" />
      <Card title={c("details")}>
        <dl className="props">
          <dt>{t("clientId")}</dt>
          <dd>
            <code>{app.clientId}</code>
          </dd>
          <dt>{t("appKind")}</dt>
          <dd>{kindLabel(app)}</dd>
          <dt>{c("state")}</dt>
          <dd>{active ? c("active") : c("inactive")}</dd>
          <dt>{t("hasSecret")}</dt>
          <dd>
            <YesNo value={app.hasSecret} />
          </dd>
          <dt>{c("id")}</dt>
          <dd>{id}</dd>
          <dt>{c("changed")}</dt>
          <dd>{date(app.details?.changeDate)}</dd>
        </dl>
      </Card>

      {can("project.app.write") && <EditApp app={app} />}

      {can("project.app.write") && (usesSecret(app.application) || usesKeys(app.application)) && (
        <Card title={t("credentialsTitle")}>
          <ErrorText error={credentials.error} />
          <div className="buttons">
            {usesSecret(app.application) && (
              <ConfirmButton
                label={t("newSecret")}
                question={t("confirmNewSecret")}
                onConfirm={async () => {
                  const r = await credentials.run(() => secret.mutateAsync({ id }), t("secretMade"));
                  if (r) setShown({ title: t("secretOf", { clientId: r.clientId }), value: r.clientSecret });
                }}
              />
            )}
            {usesKeys(app.application) && (
              <button
                type="button"
                onClick={async () => {
                  const r = await credentials.run(() => addKey.mutateAsync({ id }), t("keyMade"));
                  if (r) setShown({ title: t("keyOf", { keyId: r.keyId }), value: r.keyContent });
                }}
              >
                {t("newKey")}
              </button>
            )}
          </div>
          <Status text={credentials.status} />
        </Card>
      )}

      {usesKeys(app.application) && <AppKeys id={id} writable={can("project.app.write")} />}

      <StateCard
        active={active}
        canWrite={can("project.app.write")}
        canDelete={can("project.app.delete")}
        questions={{ deactivate: t("confirmDeactivateApp", { name }), delete: t("confirmDeleteApp", { name }) }}
        deactivate={() => deactivate.mutateAsync({ id })}
        reactivate={() => reactivate.mutateAsync({ id })}
        remove={() => remove.mutateAsync({ id })}
        deleted={() => navigate(`${projectPath}/apps`)}
      />
      <SecretModal title={shown?.title} value={shown?.value} onClose={() => setShown(undefined)} />
    </Page>
  );
}

function EditApp({ app }: { app: GetApplication }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const patch = useMutation(ApplicationService.method.patchApplication);
  const action = useRun({ refresh: true });
  const { state, setState, error, request } = useAppForm(() => appState(app.application), action.error);
  return (
    <Card title={t("configTitle")}>
      <SubmitForm
        error={error}
        names={appFieldNames}
        busy={action.busy}
        submitLabel={c("save")}
        status={action.status}
        onSubmit={async () => {
          const application = request();
          if (!application) return;
          await action.run(() => patch.mutateAsync({ id: app.details?.id ?? "", application: { name: application.name, type: application.type } }), c("saved"));
        }}
      >
        <AppFields state={state} onChange={setState} error={error} isNew={false} />
        {usesSecret(app.application) !== stateUsesSecret(state) && <p className="hint">{t("authChangeHint")}</p>}
      </SubmitForm>
    </Card>
  );
}
