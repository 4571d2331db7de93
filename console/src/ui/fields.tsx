// Labelled form fields on native elements; `name` is the request's field path, so that a server error naming it shows
// at the field (errorOf in api.ts), else above the form (ErrorText).
import { type ReactNode, type TextareaHTMLAttributes, useId } from "react";
import { useT } from "../i18n";
import { messages } from "../i18n/core";
import { ErrorText, type FormError } from "./base";

type InputProps = Omit<React.InputHTMLAttributes<HTMLInputElement>, "name"> & { name: string };

/** The error of this field, or its hint, below it (`${id}-d`, which the input names in aria-describedby). */
function Below({ id, mine, hint }: { id: string; mine: string | undefined; hint?: ReactNode }) {
  if (!mine && !hint) return null;
  return (
    <div id={`${id}-d`} className={mine ? "field-error" : "hint"}>
      {mine ?? hint}
    </div>
  );
}

/** A labelled input; `name` is the request's field path, so that an error naming it shows here. */
export function Field({ label, error, hint, ...input }: InputProps & { label: string; error?: FormError; hint?: string }) {
  const id = useId();
  const mine = error?.field === input.name ? error.message : undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} aria-invalid={mine ? true : undefined} aria-describedby={mine || hint ? `${id}-d` : undefined} {...input} />
      <Below id={id} mine={mine} hint={hint} />
    </div>
  );
}

/** A search input (type "search") whose text goes to `onChange`. */
export function SearchField({ label, name, value, onChange }: { label: string; name: string; value: string; onChange: (v: string) => void }) {
  return <Field label={label} name={name} type="search" value={value} onChange={(e) => onChange(e.target.value)} />;
}

/**
 * A labelled <select>, with a hint and the error the server named for it. `markInvalid` also sets aria-invalid on
 * an error (the settings pages' selects).
 */
export function Select({
  label,
  name,
  value,
  onChange,
  options,
  error,
  hint,
  markInvalid,
}: {
  label: ReactNode;
  name: string;
  value: string;
  onChange: (v: string) => void;
  options: { value: string; label: string }[];
  error?: FormError;
  hint?: string;
  markInvalid?: boolean;
}) {
  const id = useId();
  const mine = error?.field === name ? error.message : undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select
        id={id}
        name={name}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        aria-invalid={markInvalid && mine ? true : undefined}
        aria-describedby={mine || hint ? `${id}-d` : undefined}
      >
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      <Below id={id} mine={mine} hint={hint} />
    </div>
  );
}

export function Checkbox({ label, name, checked, onChange }: { label: string; name: string; checked: boolean; onChange: (v: boolean) => void }) {
  const id = useId();
  return (
    <div className="field field-check">
      <input id={id} type="checkbox" name={name} checked={checked} onChange={(e) => onChange(e.target.checked)} />
      <label htmlFor={id}>{label}</label>
    </div>
  );
}

/** A checkbox with its label, and a hint below. */
export function CheckField({
  label,
  name,
  checked,
  onChange,
  hint,
}: {
  label: string;
  name: string;
  checked: boolean;
  onChange: (v: boolean) => void;
  hint?: string;
}) {
  const id = useId();
  return (
    <div className="field">
      <div>
        <input
          id={id}
          type="checkbox"
          name={name}
          checked={checked}
          onChange={(e) => onChange(e.target.checked)}
          aria-describedby={hint ? `${id}-d` : undefined}
        />{" "}
        <label htmlFor={id}>{label}</label>
      </div>
      <Below id={id} mine={undefined} hint={hint} />
    </div>
  );
}

/** A labelled multi-line input, as Field. */
export function TextArea({
  label,
  hint,
  error,
  rows = 4,
  ...area
}: Omit<TextareaHTMLAttributes<HTMLTextAreaElement>, "name"> & { name: string; label: string; hint?: string; error?: FormError }) {
  const id = useId();
  const mine = error?.field === area.name ? error.message : undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea id={id} rows={rows} aria-invalid={mine ? true : undefined} aria-describedby={mine || hint ? `${id}-d` : undefined} {...area} />
      <Below id={id} mine={mine} hint={hint} />
    </div>
  );
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
  const c = useT(messages);
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
                {c("entryOf", { label: legend, n: i + 1 })}
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
                  <span className="visually-hidden"> {c("entryOf", { label: legend, n: i + 1 })}</span>
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
          {c("addEntry")}
          <span className="visually-hidden"> ({legend})</span>
        </button>
      </div>
      <Below id={id} mine={whole} hint={hint} />
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
      <Below id={id} mine={mine} hint={hint} />
    </fieldset>
  );
}

/** For a user who may only read: the inputs within disabled. */
export function ReadOnly({ when, children }: { when: boolean; children: ReactNode }) {
  return when ? <fieldset disabled>{children}</fieldset> : children;
}

/** Disables the inputs within while read-only or busy, without a frame of its own. */
export function Group({ disabled, children }: { disabled: boolean; children: ReactNode }) {
  return (
    <fieldset disabled={disabled} className="bare">
      {children}
    </fieldset>
  );
}

/**
 * A form of a resource: the server's error above it (unless a field of `fields` shows it), the inputs disabled for a
 * user who may only read, and the submit button for one who may change.
 */
export function EditForm({
  fields,
  error,
  disabled,
  submitLabel,
  pending,
  onSubmit,
  children,
}: {
  fields: string[];
  error: FormError;
  disabled: boolean;
  submitLabel: string;
  pending: boolean;
  onSubmit: () => void;
  children: ReactNode;
}) {
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
      }}
    >
      <ErrorText error={error} fields={fields} />
      <ReadOnly when={disabled}>
        {children}
        {!disabled && (
          <button type="submit" className="primary" disabled={pending}>
            {submitLabel}
          </button>
        )}
      </ReadOnly>
    </form>
  );
}
