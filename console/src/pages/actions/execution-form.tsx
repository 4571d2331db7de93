// The form of an execution: its condition (a call, a function or an event, narrowed to one method, a service, a group
// or all), and the ordered targets and includes it runs.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useId, useMemo, useState } from "react";
import { ActionService } from "../../../../gen/svc/resources/action/v3alpha/action_service_pb.js";
import type { ConditionSchema, GetExecution } from "../../../../gen/svc/resources/action/v3alpha/execution_pb.js";
import { EventService } from "../../../../gen/svc/resources/event/v3alpha/event_service_pb.js";
import { useAccess } from "../../access";
import { errorOf } from "../../api";
import { useT } from "../../i18n";
import { messages } from "../../i18n/actions";
import { messages as core } from "../../i18n/core";
import { ErrorText, Field, type FormError, Select } from "../../ui";
import { type ConditionKind, OrderedPicker, typeOfKind, useConditionText, useExecutionIdText, useKindLabel } from "./common";

type Scope = "one" | "service" | "group" | "all";

interface ConditionState {
  kind: ConditionKind;
  scope: Scope;
  service: string;
  method: string;
  fn: string;
  event: string;
  group: string;
}

const FIELDS = [
  "execution.condition",
  "execution.condition.request",
  "execution.condition.request.method",
  "execution.condition.request.service",
  "execution.condition.response",
  "execution.condition.response.method",
  "execution.condition.response.service",
  "execution.condition.function",
  "execution.condition.event",
  "execution.condition.event.event",
  "execution.condition.event.group",
  "execution.targets",
  "execution.includes",
];

/** A list error (execution.targets[2]) at its list's picker. */
function formErrorOf(err: unknown): FormError {
  const e = errorOf(err);
  const list = e.field && /^(execution\.(targets|includes))\[\d+\]$/.exec(e.field);
  if (list) return { ...e, field: list[1] };
  // "target "x" not found (execution.targets)": about the list too
  const named = /\((execution\.(targets|includes))\)$/.exec(e.message);
  if (!e.field && named) return { ...e, field: named[1] };
  return e;
}

function conditionOf(s: ConditionState): MessageInitShape<typeof ConditionSchema> {
  if (s.kind === "function") return { conditionType: { case: "function", value: s.fn } };
  if (s.kind === "event") {
    const condition =
      s.scope === "one"
        ? ({ case: "event", value: s.event.trim() } as const)
        : s.scope === "group"
          ? ({ case: "group", value: s.group.trim() } as const)
          : ({ case: "all", value: true } as const);
    return { conditionType: { case: "event", value: { condition } } };
  }
  const condition =
    s.scope === "one"
      ? ({ case: "method", value: s.method } as const)
      : s.scope === "service"
        ? ({ case: "service", value: s.service } as const)
        : ({ case: "all", value: true } as const);
  return s.kind === "request" ? { conditionType: { case: "request", value: { condition } } } : { conditionType: { case: "response", value: { condition } } };
}

function kindOfExecution(x: GetExecution | undefined): ConditionKind {
  const k = x?.execution?.condition?.conditionType.case;
  return k ?? "request";
}

/** "/pkg.Service/Method" → "pkg.Service". */
const serviceOfMethod = (m: string) => m.slice(1).split("/")[0] ?? "";

export function ExecutionForm({
  editing,
  presetTarget,
  targets,
  onClose,
  onSaved,
}: {
  editing: GetExecution | undefined;
  presetTarget?: string;
  targets: { value: string; label: string }[];
  onClose: () => void;
  onSaved: () => void;
}) {
  const t = useT(messages);
  const c = useT(core);
  const access = useAccess();
  const kindLabel = useKindLabel();
  const conditionText = useConditionText();
  const idText = useExecutionIdText();
  const qc = useQueryClient();
  const id = useId();
  const methods = useQuery(ActionService.method.listAvailableExecutionMethods, {});
  const services = useQuery(ActionService.method.listAvailableExecutionServices, {});
  const functions = useQuery(ActionService.method.listAvailableExecutionFunctions, {});
  const eventTypes = useQuery(EventService.method.listEventTypes, {}, { enabled: access.everywhere("events.read") });
  const [cond, setCond] = useState<ConditionState>(() => ({
    kind: kindOfExecution(editing),
    scope: "one",
    service: "",
    method: "",
    fn: "",
    event: "",
    group: "",
  }));
  const [chosenTargets, setChosenTargets] = useState<string[]>(editing?.execution?.targets ?? (presetTarget ? [presetTarget] : []));
  const [includes, setIncludes] = useState<string[]>(editing?.execution?.includes ?? []);
  const [error, setError] = useState<FormError>(undefined);
  const put = useMutation(ActionService.method.putExecution);
  // executions of the same condition type, to include
  const sameKind = useQuery(ActionService.method.searchExecutions, {
    query: { limit: 1000, asc: true },
    filters: [{ filter: { case: "executionType", value: { type: typeOfKind[cond.kind] } } }],
  });
  const includeOptions = (sameKind.data?.result ?? [])
    .map((x) => x.details?.id ?? "")
    .filter((x) => x && x !== editing?.details?.id)
    .map((x) => ({ value: x, label: idText(x) }));

  const serviceList = services.data?.services ?? [];
  const service = cond.service || serviceList[0] || "";
  const methodList = (methods.data?.methods ?? []).filter((m) => serviceOfMethod(m) === service);
  const method = methodList.includes(cond.method) ? cond.method : (methodList[0] ?? "");
  const functionList = functions.data?.functions ?? [];
  const fn = cond.fn || functionList[0] || "";
  const eventList = eventTypes.data?.eventTypes ?? [];
  const groups = useMemo(() => {
    const set = new Set<string>();
    for (const e of eventTypes.data?.eventTypes ?? []) {
      const parts = e.split(".");
      for (let i = 1; i < parts.length; i++) set.add(parts.slice(0, i).join("."));
    }
    return [...set].sort();
  }, [eventTypes.data]);
  const set = (v: Partial<ConditionState>) => setCond((old) => ({ ...old, ...v }));
  const kind = cond.kind;
  const callKind = kind === "request" || kind === "response";
  const catalogueError = [methods.error, services.error, functions.error, eventTypes.error].find(Boolean);

  return (
    <form
      noValidate
      onSubmit={async (e) => {
        e.preventDefault();
        setError(undefined);
        const condition = editing?.execution?.condition ?? conditionOf({ ...cond, service, method, fn });
        try {
          await put.mutateAsync({ execution: { condition, targets: chosenTargets, includes } });
          await qc.invalidateQueries();
          onSaved();
        } catch (err) {
          setError(formErrorOf(err));
        }
      }}
    >
      <ErrorText error={error} fields={FIELDS} />
      {catalogueError && <ErrorText error={errorOf(catalogueError)} />}
      {editing ? (
        <dl className="props">
          <dt>{t("conditionType")}</dt>
          <dd>{conditionText(editing.execution?.condition).kind}</dd>
          <dt>{t("condition")}</dt>
          <dd>{conditionText(editing.execution?.condition).what}</dd>
        </dl>
      ) : (
        <fieldset>
          <legend>{t("condition")}</legend>
          <Select
            label={t("conditionType")}
            name="execution.condition"
            value={kind}
            onChange={(v) => {
              set({ kind: v as ConditionKind, scope: "one" });
              setIncludes([]);
            }}
            options={(["request", "response", "function", "event"] as const).map((k) => ({ value: k, label: kindLabel(k) }))}
            error={error}
          />
          <p className="hint">{t(`${kind}Hint` as const)}</p>
          {callKind && (
            <>
              <Select
                label={t("scope")}
                name={`execution.condition.${kind}`}
                value={cond.scope}
                onChange={(v) => set({ scope: v as Scope })}
                options={[
                  { value: "one", label: t("scopeMethod") },
                  { value: "service", label: t("scopeService") },
                  { value: "all", label: t("scopeAllCalls") },
                ]}
                error={error}
              />
              {cond.scope !== "all" && (
                <Select
                  label={t("service")}
                  name={`execution.condition.${kind}.service`}
                  value={service}
                  onChange={(v) => set({ service: v, method: "" })}
                  options={serviceList.map((s) => ({ value: s, label: s }))}
                  error={error}
                />
              )}
              {cond.scope === "one" && (
                <Select
                  label={t("method")}
                  name={`execution.condition.${kind}.method`}
                  value={method}
                  onChange={(v) => set({ method: v })}
                  options={methodList.map((m) => ({ value: m, label: m.split("/").pop() ?? m }))}
                  error={error}
                />
              )}
            </>
          )}
          {kind === "function" && (
            <Select
              label={t("function")}
              name="execution.condition.function"
              value={fn}
              onChange={(v) => set({ fn: v })}
              options={functionList.map((f) => ({ value: f, label: f }))}
              error={error}
            />
          )}
          {kind === "event" && (
            <>
              <Select
                label={t("scope")}
                name="execution.condition.event"
                value={cond.scope}
                onChange={(v) => set({ scope: v as Scope })}
                options={[
                  { value: "one", label: t("scopeEvent") },
                  { value: "group", label: t("scopeGroup") },
                  { value: "all", label: t("scopeAllEvents") },
                ]}
                error={error}
              />
              {cond.scope === "one" && (
                <>
                  <Field
                    label={t("eventType")}
                    name="execution.condition.event.event"
                    list={`${id}-events`}
                    value={cond.event}
                    onChange={(e) => set({ event: e.target.value })}
                    error={error}
                    hint={t("eventTypeHint")}
                    autoComplete="off"
                  />
                  <datalist id={`${id}-events`}>
                    {eventList.map((ev) => (
                      <option key={ev} value={ev} />
                    ))}
                  </datalist>
                </>
              )}
              {cond.scope === "group" && (
                <>
                  <Field
                    label={t("eventGroup")}
                    name="execution.condition.event.group"
                    list={`${id}-groups`}
                    value={cond.group}
                    onChange={(e) => set({ group: e.target.value })}
                    error={error}
                    hint={t("eventGroupHint")}
                    autoComplete="off"
                  />
                  <datalist id={`${id}-groups`}>
                    {groups.map((g) => (
                      <option key={g} value={g} />
                    ))}
                  </datalist>
                </>
              )}
            </>
          )}
        </fieldset>
      )}
      <OrderedPicker
        legend={t("targetsToCall")}
        addLabel={t("addTarget")}
        name="execution.targets"
        options={targets}
        value={chosenTargets}
        onChange={setChosenTargets}
        error={error}
        hint={t("targetsHint")}
      />
      <OrderedPicker
        legend={t("includes")}
        addLabel={t("addInclude")}
        name="execution.includes"
        options={includeOptions}
        value={includes}
        onChange={setIncludes}
        error={error}
        hint={t("includesHint")}
      />
      <div className="buttons">
        <button type="submit" className="primary" disabled={put.isPending}>
          {c("save")}
        </button>
        <button type="button" onClick={onClose}>
          {c("cancel")}
        </button>
      </div>
    </form>
  );
}
