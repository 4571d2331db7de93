// Small building blocks the organisation and project sections share: a debounced search text, a form's error and
// status, repeated inputs and checkbox groups whose errors the server names by index ("grant.role_keys[1]"), and
// links that act as tabs.
import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import { useQueryClient } from "@tanstack/react-query";
import { type ReactNode, useEffect, useId, useState } from "react";
import { errorOf } from "../../api";
import { formatDate, useLanguage, useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/projects";
import { navigate } from "../../router";
import { ErrorText, type FormError, Status } from "../../ui";

export const PAGE_SIZE = 20;

/** The value once it has not changed for a moment (a search field's text, not one request per key). */
export function useDebounced<T>(value: T, ms = 300): T {
  const [v, setV] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setV(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return v;
}

/** A timestamp in the page's language; empty without one. */
export function useDate(): (ts: Timestamp | undefined) => string {
  const lang = useLanguage();
  return (ts) => formatDate(lang, ts ? timestampDate(ts) : undefined);
}

/** Whether a server error names this field or an item of it ("role_keys" for "role_keys[2]"). */
export function namesField(error: FormError, name: string): boolean {
  const f = error?.field;
  return !!f && (f === name || f.startsWith(`${name}[`) || f.startsWith(`${name}.`));
}

/** The error above a form, unless one of its fields shows it. */
export function FormErrorText({ error, names }: { error: FormError; names: string[] }) {
  const shownAtField = names.some((n) => namesField(error, n));
  return <ErrorText error={error} fields={shownAtField && error?.field ? [error.field] : []} />;
}

/**
 * One change at a time: its error (for the form's fields) and a status line after it worked ("Saved."). Every query
 * is refreshed after a change.
 */
export function useAction() {
  const qc = useQueryClient();
  const [error, setError] = useState<FormError>();
  const [status, setStatus] = useState("");
  const [busy, setBusy] = useState(false);
  async function run<R>(fn: () => Promise<R>, done?: string): Promise<R | undefined> {
    setError(undefined);
    setStatus("");
    setBusy(true);
    try {
      const r = await fn();
      if (done) setStatus(done);
      await qc.invalidateQueries();
      return r;
    } catch (err) {
      setError(errorOf(err));
      return undefined;
    } finally {
      setBusy(false);
    }
  }
  const reset = () => {
    setError(undefined);
    setStatus("");
  };
  return { error, status, busy, run, reset, setStatus };
}

/** A polite status line that is always there, so that a screen reader hears its changes. */
export function Saved({ text }: { text: string }) {
  return <Status text={text} />;
}

/** A list of inputs for a repeated string field; each named "<name>[i]" so that the server's error finds it. */
export function RepeatedField({
  legend,
  name,
  values,
  onChange,
  error,
  hint,
  type = "text",
}: {
  legend: string;
  name: string;
  values: string[];
  onChange: (v: string[]) => void;
  error?: FormError;
  hint?: string;
  type?: string;
}) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const id = useId();
  const whole = error?.field === name ? error.message : undefined;
  const rows = values.length ? values : [""];
  return (
    <fieldset className="field" aria-describedby={whole || hint ? `${id}-d` : undefined}>
      <legend>{legend}</legend>
      {rows.map((v, i) => {
        const itemName = `${name}[${i}]`;
        const mine = error?.field === itemName ? error.message : undefined;
        const inputId = `${id}-${i}`;
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: the rows are positions of the list, as the server names them
          <div key={i}>
            <div className="buttons">
              <label htmlFor={inputId} className="visually-hidden">
                {t("itemOf", { label: legend, n: i + 1 })}
              </label>
              <input
                id={inputId}
                type={type}
                size={34}
                name={itemName}
                value={v}
                aria-invalid={mine ? true : undefined}
                aria-describedby={mine ? `${inputId}-e` : undefined}
                onChange={(e) => onChange(rows.map((x, j) => (j === i ? e.target.value : x)))}
              />
              {(rows.length > 1 || v !== "") && (
                <button type="button" onClick={() => onChange(rows.filter((_, j) => j !== i))}>
                  {c("remove")}
                  <span className="visually-hidden"> {t("itemOf", { label: legend, n: i + 1 })}</span>
                </button>
              )}
            </div>
            {mine && (
              <div id={`${inputId}-e`} className="field-error">
                {mine}
              </div>
            )}
          </div>
        );
      })}
      <div>
        <button type="button" onClick={() => onChange([...rows, ""])}>
          {t("addEntry")}
          <span className="visually-hidden"> ({legend})</span>
        </button>
      </div>
      {(whole || hint) && (
        <div id={`${id}-d`} className={whole ? "field-error" : "hint"}>
          {whole ?? hint}
        </div>
      )}
    </fieldset>
  );
}

/** Checkboxes for a repeated field (enum values or role keys); an error of the field or of one item shows below. */
export function CheckGroup<V extends string | number>({
  legend,
  name,
  options,
  selected,
  onChange,
  error,
  hint,
}: {
  legend: string;
  name: string;
  options: { value: V; label: string }[];
  selected: V[];
  onChange: (v: V[]) => void;
  error?: FormError;
  hint?: string;
}) {
  const id = useId();
  const mine = namesField(error, name) ? error?.message : undefined;
  return (
    <fieldset className="field" aria-describedby={mine || hint ? `${id}-d` : undefined}>
      <legend>{legend}</legend>
      {options.map((o) => (
        <div key={String(o.value)} className="field-check">
          <input
            id={`${id}-${o.value}`}
            type="checkbox"
            name={name}
            value={String(o.value)}
            checked={selected.includes(o.value)}
            onChange={(e) => onChange(e.target.checked ? [...selected, o.value] : selected.filter((s) => s !== o.value))}
          />
          <label htmlFor={`${id}-${o.value}`}>{o.label}</label>
        </div>
      ))}
      {(mine || hint) && (
        <div id={`${id}-d`} className={mine ? "field-error" : "hint"}>
          {mine ?? hint}
        </div>
      )}
    </fieldset>
  );
}

/** Links to the parts of an item, the current one marked for screen readers too. */
export function Tabs({ label, tabs, current }: { label: string; tabs: { to: string; label: string }[]; current: string }) {
  return (
    <nav aria-label={label} className="toolbar">
      {tabs.map((tab) => (
        <a
          key={tab.to}
          href={`/ui/console${tab.to}`}
          aria-current={tab.to === current ? "page" : undefined}
          className={tab.to === current ? "current" : undefined}
          onClick={(e) => {
            if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
            e.preventDefault();
            navigate(tab.to);
          }}
        >
          {tab.to === current ? <strong>{tab.label}</strong> : tab.label}
        </a>
      ))}
    </nav>
  );
}

/** "Yes"/"No" in words (no colour-only information). */
export function YesNo({ value }: { value: boolean }) {
  const t = useT(messages);
  return <>{value ? t("yes") : t("no")}</>;
}

/** A section of a page: a card with its h2. */
export function Card({ title, children, id }: { title: string; children: ReactNode; id?: string }) {
  const h = useId();
  return (
    <section className="card" aria-labelledby={id ?? h}>
      <h2 id={id ?? h}>{title}</h2>
      {children}
    </section>
  );
}
