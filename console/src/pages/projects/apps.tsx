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
import { errorOf } from "../../api";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/projects";
import { navigate } from "../../router";
import {
  Card,
  type Column,
  DataTable,
  ErrorText,
  type FormError,
  FormErrorText,
  Link,
  SearchField,
  SecretModal,
  Select,
  useDebounced,
  useListState,
  useRun,
} from "../../ui";
import { AppFields, type AppState, appFieldNames, appRequest, newApp, tidy } from "./app-form";
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
        <Select
          label={t("order")}
          name="query.asc"
          value={asc ? "asc" : "desc"}
          onChange={(v) => paged.onSort("", v === "asc")}
          options={[
            { value: "asc", label: t("oldestFirst") },
            { value: "desc", label: t("newestFirst") },
          ]}
        />
      </search>
      {list.isError && <ErrorText error={errorOf(list.error)} />}
      <DataTable
        caption={t("appsCaption")}
        columns={columns}
        rows={list.data?.result}
        rowKey={(a) => a.details?.id ?? ""}
        paging={paged.paging(list.data?.details?.totalResult)}
        loading={list.isFetching}
      />
    </Card>
  );
}

export function CreateApp({ project }: { project: GetProject }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const projectId = project.details?.id ?? "";
  const [state, setState] = useState<AppState>(newApp);
  const [formError, setFormError] = useState<FormError>();
  const [created, setCreated] = useState<{ id: string; clientId: string; secret: string }>();
  const create = useMutation(ApplicationService.method.createApplication);
  const action = useRun({ refresh: true });
  const error = formError ?? action.error;
  const appPath = (id: string) => `/projects/${projectId}/apps/${id}`;
  return (
    <Card title={t("newApp")}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const sent = tidy(state);
          setState(sent);
          const req = appRequest(sent, t("clockSkewNumber"));
          if ("error" in req) {
            setFormError(req.error);
            return;
          }
          setFormError(undefined);
          const r = await action.run(() => create.mutateAsync({ projectId, application: req.app }));
          if (!r) return;
          const id = r.details?.id ?? "";
          if (r.clientSecret) setCreated({ id, clientId: r.clientId, secret: r.clientSecret });
          else navigate(appPath(id));
        }}
      >
        <FormErrorText error={error} names={appFieldNames} />
        <AppFields state={state} onChange={setState} error={error} isNew />
        <div className="buttons">
          <button type="button" onClick={() => navigate(`/projects/${projectId}/apps`)}>
            {c("cancel")}
          </button>
          <button type="submit" className="primary" disabled={action.busy}>
            {c("create")}
          </button>
        </div>
      </form>
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
