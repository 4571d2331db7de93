import type { MessageInitShape } from "@bufbuild/protobuf";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { keepPreviousData } from "@tanstack/react-query";
import { useState } from "react";
import {
  type ApplicationSearchFilterSchema,
  ApplicationState,
  type GetApplication,
  OIDCAppType,
} from "../../../../gen/svc/resources/application/v3alpha/application_pb.js";
import { ApplicationService } from "../../../../gen/svc/resources/application/v3alpha/application_service_pb.js";
import { TextFilterMethod } from "../../../../gen/svc/resources/object/v3alpha/object_pb.js";
import type { GetProject } from "../../../../gen/svc/resources/project/v3alpha/project_pb.js";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/projects";
import { navigate } from "../../router";
import { Card, type Column, DialogForm, Link, OrderSelect, QueryTable, SearchField, SecretModal, useDebounced, useListState, useRun } from "../../ui";
import { AppFields, appFieldNames, newApp, useAppForm } from "./app-form";
import { useProjectCan } from "./project";

/** "Web (OIDC)", "API"… */
export function useKindLabel(): (a: GetApplication) => string {
  const t = useT(messages);
  return (a) => {
    const type = a.application?.type;
    if (type?.case === "api") return t("kindApi");
    if (type?.case !== "oidc") return "";
    const appType = type.value.appType;
    const kind =
      appType === OIDCAppType.OIDC_APP_TYPE_USER_AGENT
        ? t("appTypeUserAgent")
        : appType === OIDCAppType.OIDC_APP_TYPE_NATIVE
          ? t("appTypeNative")
          : t("appTypeWeb");
    return `${t("kindOidcShort")}: ${kind}`;
  };
}

export function Apps({ project }: { project: GetProject }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const can = useProjectCan(project);
  const kindLabel = useKindLabel();
  const projectId = project.details?.id ?? "";
  const [search, setSearch] = useState("");
  const text = useDebounced(search.trim());
  const paged = useListState({ column: "", asc: true });
  const asc = paged.sort.asc;
  const filters: MessageInitShape<typeof ApplicationSearchFilterSchema>[] = [{ filter: { case: "projectId", value: { projectId } } }];
  if (text) filters.push({ filter: { case: "name", value: { name: text, method: TextFilterMethod.CONTAINS_IGNORE_CASE } } });
  const list = useQuery(ApplicationService.method.searchApplications, { query: paged.query, filters }, { placeholderData: keepPreviousData });
  const columns: Column<GetApplication>[] = [
    { key: "name", label: c("name"), render: (a) => <Link to={`/projects/${projectId}/apps/${a.details?.id}`}>{a.application?.name}</Link> },
    { key: "kind", label: t("appKind"), render: kindLabel },
    { key: "client", label: t("clientId"), render: (a) => <code>{a.clientId}</code> },
    { key: "state", label: c("state"), render: (a) => (a.state === ApplicationState.INACTIVE ? c("inactive") : c("active")) },
  ];
  return (
    <Card title={t("appsTitle")}>
      {can("project.app.write") && (
        <p>
          <Link to={`/projects/${projectId}/apps/new`}>{t("newApp")}</Link>
        </p>
      )}
      <search className="toolbar">
        <SearchField label={t("searchName")} name="filters.name.name" value={search} onChange={paged.reset(setSearch)} />
        <OrderSelect label={t("order")} oldest={t("oldestFirst")} newest={t("newestFirst")} asc={asc} onChange={(a) => paged.onSort("", a)} />
      </search>
      <QueryTable list={list} caption={t("appsCaption")} columns={columns} rowKey={(a) => a.details?.id ?? ""} paging={paged.paging} />
    </Card>
  );
}

export function CreateApp({ project }: { project: GetProject }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const projectId = project.details?.id ?? "";
  const [created, setCreated] = useState<{ id: string; clientId: string; secret: string }>();
  const create = useMutation(ApplicationService.method.createApplication);
  const action = useRun({ refresh: true });
  const { state, setState, error, request } = useAppForm(newApp, action.error);
  const appPath = (id: string) => `/projects/${projectId}/apps/${id}`;
  return (
    <Card title={t("newApp")}>
      <DialogForm
        error={error}
        names={appFieldNames}
        busy={action.busy}
        submitLabel={c("create")}
        onCancel={() => navigate(`/projects/${projectId}/apps`)}
        onSubmit={async () => {
          const application = request();
          if (!application) return;
          const r = await action.run(() => create.mutateAsync({ projectId, application }));
          if (!r) return;
          const id = r.details?.id ?? "";
          if (r.clientSecret) setCreated({ id, clientId: r.clientId, secret: r.clientSecret });
          else navigate(appPath(id));
        }}
      >
        <AppFields state={state} onChange={setState} error={error} isNew />
      </DialogForm>
      <SecretModal
        title={t("secretOf", { clientId: created?.clientId ?? "" })}
        value={created?.secret}
        onClose={() => {
          if (created) navigate(appPath(created.id));
        }}
      />
    </Card>
  );
}
