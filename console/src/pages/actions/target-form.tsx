// A target's form: its values, the fields, the form of a new one or of one to change, and the request's parts they
// share.
import { Code } from "@connectrpc/connect";
import type { ReactNode } from "react";
import type { Target } from "../../../../gen/svc/resources/action/v3alpha/target_pb.js";
import { errorOf } from "../../api";
import { useT } from "../../i18n";
import { messages } from "../../i18n/actions";
import { messages as core } from "../../i18n/core";
import { ErrorText, Field, type FormError, Select } from "../../ui";
import { kindOf, modeOf, secondsOf, type TargetKind, type TargetMode, urlOf } from "./common";

/** The texts of a target's type and mode. */
export function useTargetTexts() {
  const t = useT(messages);
  return {
    kind: (k: TargetKind) => t(k === "rest_webhook" ? "typeWebhook" : "typeCall"),
    mode: (m: TargetMode) => t(m === "async" ? "modeAsync" : m === "interrupt" ? "modeInterrupt" : "modeContinue"),
  };
}

export interface TargetValues {
  name: string;
  kind: TargetKind;
  url: string;
  timeout: string;
  mode: TargetMode;
}

export function valuesOf(target: Target | undefined): TargetValues {
  return {
    name: target?.name ?? "",
    kind: kindOf(target),
    url: urlOf(target),
    timeout: String(secondsOf(target?.timeout) ?? 10),
    mode: modeOf(target),
  };
}

/** ALREADY_EXISTS is about the name. */
export function targetErrorOf(err: unknown): FormError {
  const e = errorOf(err);
  return e.code === Code.AlreadyExists && !e.field ? { ...e, field: "target.name" } : e;
}

export function TargetFields({ values, set, error }: { values: TargetValues; set: (v: Partial<TargetValues>) => void; error: FormError }) {
  const t = useT(messages);
  const c = useT(core);
  const texts = useTargetTexts();
  return (
    <>
      <Field label={c("name")} name="target.name" value={values.name} onChange={(e) => set({ name: e.target.value })} error={error} autoComplete="off" />
      <Select
        label={t("type")}
        name="target.target_type"
        value={values.kind}
        onChange={(v) => set({ kind: v as TargetKind })}
        options={(["rest_webhook", "rest_request_response"] as const).map((k) => ({ value: k, label: texts.kind(k) }))}
        error={error}
      />
      <p className="hint">{t(values.kind === "rest_webhook" ? "typeWebhookHint" : "typeCallHint")}</p>
      <Field
        label={t("url")}
        name={`target.${values.kind}.url`}
        type="url"
        value={values.url}
        onChange={(e) => set({ url: e.target.value })}
        error={error}
        hint={t("urlHint")}
        autoComplete="off"
      />
      <Field
        label={t("timeoutSeconds")}
        name="target.timeout"
        type="number"
        step="any"
        inputMode="decimal"
        value={values.timeout}
        onChange={(e) => set({ timeout: e.target.value })}
        error={error}
        hint={t("timeoutHint")}
      />
      <Select
        label={t("mode")}
        name="target.execution_type"
        value={values.mode}
        onChange={(v) => set({ mode: v as TargetMode })}
        options={(["continue", "interrupt", "async"] as const).map((m) => ({ value: m, label: texts.mode(m) }))}
        error={error}
      />
      <p className="hint">{t(values.mode === "async" ? "modeAsyncHint" : values.mode === "interrupt" ? "modeInterruptHint" : "modeContinueHint")}</p>
    </>
  );
}

export const FIELDS = [
  "target.name",
  "target.target_type",
  "target.rest_webhook.url",
  "target.rest_request_response.url",
  "target.timeout",
  "target.execution_type",
];

/** The request's target type: a webhook or a call, at its URL. */
export function targetTypeOf(values: TargetValues) {
  return values.kind === "rest_webhook"
    ? { case: "restWebhook" as const, value: { url: values.url.trim() } }
    : { case: "restRequestResponse" as const, value: { url: values.url.trim() } };
}

/** The form of a new target or of one to change: its error, the fields, the submit (and cancel) button, `children`. */
export function TargetForm({
  values,
  setValues,
  error,
  pending,
  submitLabel,
  onCancel,
  onSubmit,
  children,
}: {
  values: TargetValues;
  setValues: (f: (old: TargetValues) => TargetValues) => void;
  error: FormError;
  pending: boolean;
  submitLabel: string;
  onCancel?: () => void;
  onSubmit: () => unknown;
  children: ReactNode;
}) {
  const c = useT(core);
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void onSubmit();
      }}
    >
      <ErrorText error={error} fields={FIELDS} />
      <TargetFields values={values} set={(v) => setValues((old) => ({ ...old, ...v }))} error={error} />
      <div className="buttons">
        <button type="submit" className="primary" disabled={pending}>
          {submitLabel}
        </button>
        {onCancel && (
          <button type="button" onClick={onCancel}>
            {c("cancel")}
          </button>
        )}
      </div>
      {children}
    </form>
  );
}
