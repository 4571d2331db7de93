// What the targets and executions screens share: how a target, a timeout and a condition read, and an ordered picker
// (targets and includes run in the order listed).
import type { Duration } from "@bufbuild/protobuf/wkt";
import { useId, useState } from "react";
import type { Target } from "../../../../gen/svc/resources/action/v3alpha/target_pb.js";
import { type Condition, ExecutionType } from "../../../../gen/svc/resources/action/v3alpha/execution_pb.js";
import { useLanguage, useT } from "../../i18n";
import { messages } from "../../i18n/actions";
import type { FormError } from "../../ui";

export type TargetKind = "rest_webhook" | "rest_request_response";
export type TargetMode = "continue" | "interrupt" | "async";

export function kindOf(t: Target | undefined): TargetKind {
  return t?.targetType.case === "restRequestResponse" ? "rest_request_response" : "rest_webhook";
}

export function urlOf(t: Target | undefined): string {
  return t?.targetType.value?.url ?? "";
}

export function modeOf(t: Target | undefined): TargetMode {
  const e = t?.executionType;
  if (e?.case === "isAsync" && e.value) return "async";
  if (e?.case === "interruptOnError" && e.value) return "interrupt";
  return "continue";
}

/** Seconds as a number (fractions allowed). */
export function secondsOf(d: Duration | undefined): number | undefined {
  return d ? Number(d.seconds) + d.nanos / 1e9 : undefined;
}

/** A timeout field's text as a Duration; undefined when empty or not a number (the server then names the field). */
export function durationOf(text: string): { seconds: bigint; nanos: number } | undefined {
  const n = Number(text.replace(",", "."));
  if (text.trim() === "" || !Number.isFinite(n)) return undefined;
  const whole = Math.trunc(n);
  return { seconds: BigInt(whole), nanos: Math.round((n - whole) * 1e9) };
}

export function useSecondsText(): (d: Duration | undefined) => string {
  const lang = useLanguage();
  const t = useT(messages);
  return (d) => {
    const s = secondsOf(d);
    return s === undefined ? "" : t("secondsValue", { n: new Intl.NumberFormat(lang, { maximumFractionDigits: 3 }).format(s) });
  };
}

export type ConditionKind = "request" | "response" | "function" | "event";

/** The type and the "what" of a condition, as the tables show them. */
export function useConditionText(): (c: Condition | undefined) => { kind: string; what: string } {
  const t = useT(messages);
  return (c) => {
    const ct = c?.conditionType;
    switch (ct?.case) {
      case "request":
      case "response": {
        const kind = t(ct.case === "request" ? "kindRequest" : "kindResponse");
        const inner = ct.value.condition;
        if (inner.case === "method") return { kind, what: t("onMethod", { name: inner.value }) };
        if (inner.case === "service") return { kind, what: t("onService", { name: inner.value }) };
        return { kind, what: t("onAllCalls") };
      }
      case "function":
        return { kind: t("kindFunction"), what: ct.value };
      case "event": {
        const kind = t("kindEvent");
        const inner = ct.value.condition;
        if (inner.case === "event") return { kind, what: t("onEvent", { name: inner.value }) };
        if (inner.case === "group") return { kind, what: t("onGroup", { name: inner.value }) };
        return { kind, what: t("onAllEvents") };
      }
      default:
        return { kind: "", what: "" };
    }
  };
}

/** The execution type of a condition kind (the list's filter). */
export const typeOfKind: Record<ConditionKind, ExecutionType> = {
  request: ExecutionType.REQUEST,
  response: ExecutionType.RESPONSE,
  function: ExecutionType.FUNCTION,
  event: ExecutionType.EVENT,
};

export function useKindLabel(): (k: ConditionKind) => string {
  const t = useT(messages);
  return (k) => t(k === "request" ? "kindRequest" : k === "response" ? "kindResponse" : k === "function" ? "kindFunction" : "kindEvent");
}

/** An execution ID (request/svc.x.Service/Method, event/user.human.*, function/preuserinfo, ...) as words. */
export function useExecutionIdText(): (id: string) => string {
  const t = useT(messages);
  return (id) => {
    const [head = "", ...restParts] = id.split("/");
    const rest = restParts.join("/");
    switch (head) {
      case "request":
      case "response": {
        const kind = t(head === "request" ? "kindRequest" : "kindResponse");
        if (!rest) return `${kind}: ${t("onAllCalls")}`;
        return `${kind}: ${rest.includes("/") ? t("onMethod", { name: `/${rest}` }) : t("onService", { name: rest })}`;
      }
      case "function":
        return `${t("kindFunction")}: ${rest}`;
      case "event":
        if (!rest) return `${t("kindEvent")}: ${t("onAllEvents")}`;
        return `${t("kindEvent")}: ${rest.endsWith(".*") ? t("onGroup", { name: rest.slice(0, -2) }) : t("onEvent", { name: rest })}`;
      default:
        return id;
    }
  };
}

/**
 * A list whose order counts: the chosen items with buttons to move and remove them, and a select to add one of the
 * rest. An error whose field starts with `name` (execution.targets, execution.targets[1]) shows here.
 */
export function OrderedPicker({
  legend,
  addLabel,
  name,
  options,
  value,
  onChange,
  error,
  hint,
}: {
  legend: string;
  addLabel: string;
  name: string;
  options: { value: string; label: string }[];
  value: string[];
  onChange: (v: string[]) => void;
  error?: FormError;
  hint?: string;
}) {
  const t = useT(messages);
  const id = useId();
  const [adding, setAdding] = useState("");
  const labelOf = (v: string) => options.find((o) => o.value === v)?.label ?? v;
  const rest = options.filter((o) => !value.includes(o.value));
  const chosen = rest.some((o) => o.value === adding) ? adding : (rest[0]?.value ?? "");
  const mine = error?.field && (error.field === name || error.field.startsWith(`${name}[`)) ? error.message : undefined;
  const move = (i: number, by: number) => {
    const next = [...value];
    const [item] = next.splice(i, 1);
    next.splice(i + by, 0, item!);
    onChange(next);
  };
  return (
    <fieldset aria-describedby={mine || hint ? `${id}-d` : undefined}>
      <legend>{legend}</legend>
      {value.length === 0 ? (
        <p className="hint">{t("noneChosen")}</p>
      ) : (
        <ol>
          {value.map((v, i) => (
            <li key={v}>
              {labelOf(v)}{" "}
              <span className="buttons">
                <button type="button" disabled={i === 0} aria-label={t("moveUpNamed", { name: labelOf(v) })} onClick={() => move(i, -1)}>
                  {t("moveUp")}
                </button>
                <button type="button" disabled={i === value.length - 1} aria-label={t("moveDownNamed", { name: labelOf(v) })} onClick={() => move(i, 1)}>
                  {t("moveDown")}
                </button>
                <button type="button" aria-label={t("removeNamed", { name: labelOf(v) })} onClick={() => onChange(value.filter((x) => x !== v))}>
                  {t("removeItem")}
                </button>
              </span>
            </li>
          ))}
        </ol>
      )}
      {rest.length > 0 && (
        <div className="toolbar">
          <div className="field">
            <label htmlFor={`${id}-add`}>{addLabel}</label>
            <select id={`${id}-add`} name={name} value={chosen} onChange={(e) => setAdding(e.target.value)}>
              {rest.map((o) => (
                <option key={o.value} value={o.value}>
                  {o.label}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <button
              type="button"
              onClick={() => {
                if (chosen) onChange([...value, chosen]);
                setAdding("");
              }}
            >
              {t("add")}
            </button>
          </div>
        </div>
      )}
      {(mine || hint) && (
        <div id={`${id}-d`} className={mine ? "field-error" : "hint"}>
          {mine ?? hint}
        </div>
      )}
    </fieldset>
  );
}
