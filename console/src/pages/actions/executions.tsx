// Executions: which targets run, in order, when a condition triggers (a request or response of an RPC or service, a
// function of the server, an event or group of events). The condition is picked from the server's catalogues
// (ListAvailableExecutionMethods/Services/Functions, EventService.ListEventTypes), the targets from the targets.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { keepPreviousData, useQueryClient } from "@tanstack/react-query";
import { useId, useMemo, useState } from "react";
import { ActionService } from "../../../../gen/svc/resources/action/v3alpha/action_service_pb.js";
import type { ExecutionSearchFilterSchema, GetExecution } from "../../../../gen/svc/resources/action/v3alpha/execution_pb.js";
import { TargetFieldName } from "../../../../gen/svc/resources/action/v3alpha/target_pb.js";
import { useAccess } from "../../access";
import { errorOf } from "../../api";
import { useT } from "../../i18n";
import { messages } from "../../i18n/actions";
import { messages as core } from "../../i18n/core";
import { type Column, ConfirmButton, DataTable, ErrorText, Modal, Select, Status, useDate, useListState, useRun } from "../../ui";
import { ExecutionForm } from "./execution-form";
import { type ConditionKind, typeOfKind, useConditionText, useExecutionIdText, useKindLabel } from "./common";

/** Every target's name by ID (up to the API's page limit of 1000), for pickers and tables. */
function useTargetOptions(): { value: string; label: string }[] {
  const all = useQuery(ActionService.method.searchTargets, { query: { limit: 1000, asc: true }, sortingColumn: TargetFieldName.NAME });
  return useMemo(() => (all.data?.result ?? []).map((r) => ({ value: r.details?.id ?? "", label: r.target?.name ?? r.details?.id ?? "" })), [all.data]);
}

/** The instance's executions, or (with targetId) those that list one target. */
export function ExecutionsSection({ targetId }: { targetId?: string }) {
  const t = useT(messages);
  const c = useT(core);
  const date = useDate();
  const access = useAccess();
  const kindLabel = useKindLabel();
  const conditionText = useConditionText();
  const idText = useExecutionIdText();
  const qc = useQueryClient();
  const targets = useTargetOptions();
  const nameOf = (id: string) => targets.find((o) => o.value === id)?.label ?? id;
  const [kind, setKind] = useState<"" | ConditionKind>("");
  const [target, setTarget] = useState(targetId ?? "");
  const paged = useListState();
  const [editing, setEditing] = useState<GetExecution | "new" | undefined>(undefined);
  const change = useRun();
  const del = useMutation(ActionService.method.deleteExecution);
  const canRead = access.everywhere("execution.read");
  const filters: MessageInitShape<typeof ExecutionSearchFilterSchema>[] = [];
  if (kind) filters.push({ filter: { case: "executionType", value: { type: typeOfKind[kind] } } });
  if (target) filters.push({ filter: { case: "target", value: { id: target } } });
  const list = useQuery(ActionService.method.searchExecutions, { query: paged.query, filters }, { placeholderData: keepPreviousData, enabled: canRead });
  const rows = list.data?.result ?? [];
  const headingId = useId();
  if (!canRead) return null;
  const columns: Column<GetExecution>[] = [
    { key: "kind", label: t("conditionType"), render: (r) => conditionText(r.execution?.condition).kind },
    { key: "condition", label: t("condition"), render: (r) => conditionText(r.execution?.condition).what },
    {
      key: "targets",
      label: t("targets"),
      render: (r) => (
        <ol>
          {r.execution?.targets.map((id) => (
            <li key={id}>{nameOf(id)}</li>
          ))}
        </ol>
      ),
    },
    {
      key: "includes",
      label: t("includes"),
      render: (r) =>
        r.execution?.includes.length ? (
          <ol>
            {r.execution.includes.map((id) => (
              <li key={id}>{idText(id)}</li>
            ))}
          </ol>
        ) : (
          ""
        ),
    },
    { key: "changed", label: c("changed"), render: (r) => date(r.details?.changeDate) },
  ];
  if (access.everywhere("action.execution.write") || access.everywhere("action.execution.delete")) {
    columns.push({
      key: "actions",
      label: c("actions"),
      render: (r) => {
        const what = `${conditionText(r.execution?.condition).kind}: ${conditionText(r.execution?.condition).what}`;
        return (
          <div className="buttons">
            {access.everywhere("action.execution.write") && (
              <button type="button" aria-label={t("changeNamed", { name: what })} onClick={() => setEditing(r)}>
                {t("change")}
              </button>
            )}
            {access.everywhere("action.execution.delete") && (
              <ConfirmButton
                label={c("delete")}
                question={c("confirmDelete", { name: what })}
                onConfirm={() =>
                  change.run(async () => {
                    await del.mutateAsync({ id: r.details?.id ?? "" });
                    await qc.invalidateQueries();
                  }, t("executionDeleted"))
                }
              />
            )}
          </div>
        );
      },
    });
  }
  const caption = targetId ? t("executionsOfTarget") : t("executions");
  return (
    <section className="card" aria-labelledby={headingId}>
      <h2 id={headingId}>{caption}</h2>
      {!targetId && <p className="hint">{t("executionsIntro")}</p>}
      <div className="toolbar">
        <Select
          label={t("conditionType")}
          name="filters.execution_type.type"
          value={kind}
          onChange={paged.reset((v: string) => setKind(v as "" | ConditionKind))}
          options={[
            { value: "", label: t("anyType") },
            ...(["request", "response", "function", "event"] as const).map((k) => ({ value: k, label: kindLabel(k) })),
          ]}
        />
        {!targetId && (
          <Select
            label={t("target")}
            name="filters.target.id"
            value={target}
            onChange={paged.reset(setTarget)}
            options={[{ value: "", label: t("anyTarget") }, ...targets]}
          />
        )}
        <Select
          label={t("order")}
          name="query.asc"
          value={paged.sort.asc ? "asc" : "desc"}
          onChange={(v) => paged.onSort("", v === "asc")}
          options={[
            { value: "desc", label: t("newestFirst") },
            { value: "asc", label: t("oldestFirst") },
          ]}
        />
        {access.everywhere("action.execution.write") && (
          <div className="field">
            <button type="button" className="primary" onClick={() => setEditing("new")}>
              {t("newExecution")}
            </button>
          </div>
        )}
      </div>
      {change.status && <Status text={change.status} />}
      <ErrorText error={change.error} />
      <ErrorText error={list.error ? errorOf(list.error) : undefined} />
      <DataTable
        caption={caption}
        columns={columns}
        rows={list.data ? rows : undefined}
        rowKey={(r) => r.details?.id ?? ""}
        paging={paged.paging(list.data?.details?.totalResult)}
        loading={list.isFetching}
      />
      <Modal
        title={editing === "new" || !editing ? t("newExecution") : t("changeExecution")}
        open={editing !== undefined}
        onClose={() => setEditing(undefined)}
      >
        <ExecutionForm
          editing={editing === "new" ? undefined : editing}
          presetTarget={targetId}
          targets={targets}
          onClose={() => setEditing(undefined)}
          onSaved={() => {
            setEditing(undefined);
            change.setStatus(c("saved"));
          }}
        />
      </Modal>
    </section>
  );
}
