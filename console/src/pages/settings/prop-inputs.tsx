// The input of one settings property, by its type: a number, a duration with its unit, a choice, a colour, a list of
// texts, a set of choices, a checkbox.
import { useId } from "react";
import { CheckField, Field, type FormError, Select } from "../../ui";
import { HEX, type T } from "./common";
import type { Draft, PropDef } from "./properties";

/** The input of one property, by its type; the hint says where the value comes from. */
export function PropInput({
  def,
  value,
  onChange,
  origin,
  error,
  t,
}: {
  def: PropDef;
  value: Draft;
  onChange: (v: Draft) => void;
  origin: string;
  error: FormError;
  t: T;
}) {
  const name = `settings.${def.name}.set`;
  const hint = def.hint ? `${origin}. ${def.hint}` : origin;
  switch (def.type) {
    case "bool":
      return <CheckField label={def.label} name={name} checked={value as boolean} onChange={onChange} hint={hint} />;
    case "uint64":
      return (
        <Field
          label={def.label}
          name={name}
          type="number"
          inputMode="numeric"
          value={value as string}
          onChange={(e) => onChange(e.target.value)}
          hint={hint}
          error={error}
        />
      );
    case "duration": {
      const d = value as { amount: string; unit: number };
      return (
        <div className="toolbar">
          <Field
            label={def.label}
            name={name}
            type="number"
            inputMode="decimal"
            value={d.amount}
            onChange={(e) => onChange({ ...d, amount: e.target.value })}
            hint={hint}
            error={error}
          />
          <Select
            markInvalid
            label={
              <>
                {t("unit")}
                <span className="visually-hidden"> {t("unitOf", { name: def.label })}</span>
              </>
            }
            name={`${name}.unit`}
            value={String(d.unit)}
            onChange={(u) => onChange({ ...d, unit: Number(u) })}
            options={[
              { value: "1", label: t("seconds") },
              { value: "60", label: t("minutes") },
              { value: "3600", label: t("hours") },
              { value: "86400", label: t("days") },
            ]}
          />
        </div>
      );
    }
    case "select":
      return (
        <Select markInvalid label={def.label} name={name} value={value as string} onChange={onChange} options={def.options ?? []} hint={hint} error={error} />
      );
    case "color":
      return <ColorField label={def.label} name={name} value={value as string} onChange={onChange} hint={hint} error={error} t={t} />;
    case "strings":
      return <ListField label={def.label} name={name} values={value as string[]} onChange={onChange} hint={hint} error={error} t={t} />;
    case "choices":
      return <ChoicesField label={def.label} name={name} values={value as string[]} onChange={onChange} hint={hint} options={def.options ?? []} />;
    default:
      return (
        <Field
          label={def.label}
          name={name}
          type={def.inputType ?? "text"}
          value={value as string}
          onChange={(e) => onChange(e.target.value)}
          hint={hint}
          error={error}
        />
      );
  }
}

/** A colour as #rrggbb: a text field (what is sent) and the browser's colour picker for the same value. */
function ColorField({
  label,
  name,
  value,
  onChange,
  hint,
  error,
  t,
}: {
  label: string;
  name: string;
  value: string;
  onChange: (v: string) => void;
  hint: string;
  error: FormError;
  t: T;
}) {
  return (
    <>
      <Field
        label={label}
        name={name}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        hint={hint}
        error={error}
        autoComplete="off"
        spellCheck={false}
      />
      <div className="field">
        <input
          type="color"
          aria-label={t("pickColour", { name: label })}
          value={HEX.test(value) ? value : "#000000"}
          onChange={(e) => onChange(e.target.value.toLowerCase())}
        />
      </div>
    </>
  );
}

/** A list of texts: one input per item (its error names the item), add and remove. */
function ListField({
  label,
  name,
  values,
  onChange,
  hint,
  error,
  t,
}: {
  label: string;
  name: string;
  values: string[];
  onChange: (v: string[]) => void;
  hint: string;
  error: FormError;
  t: T;
}) {
  const id = useId();
  return (
    <fieldset aria-describedby={`${id}-d`}>
      <legend>{label}</legend>
      <div id={`${id}-d`} className="hint">
        {hint}
      </div>
      {values.length === 0 && <p>{t("emptyList")}</p>}
      {values.map((v, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the items are edited in place; the index is their identity
        <div key={i} className="toolbar">
          <Field
            label={t("itemOf", { name: label, n: i + 1 })}
            name={`${name}.value[${i}]`}
            value={v}
            onChange={(e) => onChange(values.map((x, j) => (j === i ? e.target.value : x)))}
            error={error}
          />
          <button type="button" onClick={() => onChange(values.filter((_, j) => j !== i))}>
            {t("removeItem", { n: i + 1 })}
          </button>
        </div>
      ))}
      <button type="button" onClick={() => onChange([...values, ""])}>
        {t("addItem", { name: label })}
      </button>
    </fieldset>
  );
}

/** A set of choices from a fixed list, as checkboxes. */
function ChoicesField({
  label,
  name,
  values,
  onChange,
  hint,
  options,
}: {
  label: string;
  name: string;
  values: string[];
  onChange: (v: string[]) => void;
  hint: string;
  options: { value: string; label: string }[];
}) {
  const id = useId();
  return (
    <fieldset aria-describedby={`${id}-d`}>
      <legend>{label}</legend>
      <div id={`${id}-d`} className="hint">
        {hint}
      </div>
      {options.map((o) => (
        <CheckField
          key={o.value}
          label={o.label}
          name={name}
          checked={values.includes(o.value)}
          onChange={(on) => onChange(on ? [...values, o.value] : values.filter((v) => v !== o.value))}
        />
      ))}
    </fieldset>
  );
}
