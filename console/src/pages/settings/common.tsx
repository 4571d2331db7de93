// What every settings page shares: the context the page acts in (the chosen organisation, the instance, the
// system), where a value comes from, and a form of properties that each may be set here or reset to the
// inherited value. Only what the user changed is sent: an untouched inherited value stays inherited.
import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { type FormEvent, type ReactNode, useId, useState } from "react";
import { type Owner, OwnerType, type RequestContext, RequestContextSchema } from "../../../../gen/svc/object/v3alpha/object_pb.js";
import { OrganizationService } from "../../../../gen/svc/resources/org/v3alpha/org_service_pb.js";
import type { Details } from "../../../../gen/svc/settings/object/v3alpha/object_pb.js";
import { orgCtx, useAccess, useOrg } from "../../access";
import { errorOf } from "../../api";
import { formatDate, useLanguage, useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/settings";
import { navigate, useLocation } from "../../router";
import { ConfirmButton, ErrorText, Field, type FormError, Link, Page, Status } from "../../ui";

export type Level = "org" | "instance" | "system";
export type T = ReturnType<typeof useT<(typeof messages)["en"]>>;

const systemCtx = create(RequestContextSchema, { owner: { case: "system", value: true } });

export interface LevelChoice {
  level: Level;
  levels: Level[];
  /** The request's `ctx`: the organisation, the system, or omitted for the instance. */
  ctx: RequestContext | undefined;
  /** The user may change the settings at this level (policy.write there). */
  canWrite: boolean;
  /** The query that keeps the level on links inside the section ("" for the first level). */
  search: string;
  setLevel(level: Level): void;
  orgId: string;
}

/** The level the settings pages act in: `?ctx=instance|system` in the URL, else the chosen organisation. */
export function useLevel(): LevelChoice {
  const access = useAccess();
  const { orgId } = useOrg();
  const { path, query } = useLocation();
  const levels: Level[] = [];
  if (orgId) levels.push("org");
  if (access.everywhere("iam.policy.read")) levels.push("instance");
  if (access.inSystem("system.policy.read")) levels.push("system");
  const asked = query.get("ctx") as Level | null;
  const level: Level = asked && levels.includes(asked) ? asked : (levels[0] ?? "org");
  const ctx = level === "org" ? orgCtx(orgId) : level === "system" ? systemCtx : undefined;
  const canWrite =
    level === "org"
      ? access.inOrg("policy.write", orgId)
      : level === "instance"
        ? access.everywhere("iam.policy.write")
        : access.inSystem("system.policy.write");
  const searchOf = (l: Level) => (l === levels[0] ? "" : `?ctx=${l}`);
  return { level, levels, ctx, canWrite, search: searchOf(level), setLevel: (l) => navigate(`${path}${searchOf(l)}`, true), orgId };
}

/** The page of one kind of settings: its title, a link back to the index, and the level picker. */
export function SettingsPage({ title, intro, children, choice }: { title: string; intro?: string; children: ReactNode; choice: LevelChoice }) {
  const t = useT(messages);
  return (
    <Page title={title} actions={<Link to={`/settings${choice.search}`}>{t("allSettings")}</Link>}>
      {intro && <p>{intro}</p>}
      <LevelPicker choice={choice} />
      {children}
    </Page>
  );
}

/** Where the page's settings apply: the chosen organisation, or for instance-wide roles the instance (or system). */
export function LevelPicker({ choice }: { choice: LevelChoice }) {
  const t = useT(messages);
  const access = useAccess();
  const org = useQuery(OrganizationService.method.getOrganization, { id: choice.orgId }, { enabled: !!choice.orgId && access.inOrg("org.read", choice.orgId) });
  const orgName = org.data?.organization?.name;
  const label = (l: Level) =>
    l === "org" ? (orgName ? t("levelOrgNamed", { name: orgName }) : t("levelOrg")) : l === "instance" ? t("levelInstance") : t("levelSystem");
  return (
    <div className="toolbar">
      {choice.levels.length > 1 ? (
        <SelectField
          label={t("appliesTo")}
          name="ctx"
          value={choice.level}
          onChange={(v) => choice.setLevel(v as Level)}
          options={choice.levels.map((l) => ({ value: l, label: label(l) }))}
          hint={t("inheritanceHint")}
        />
      ) : (
        <p>
          {t("appliesTo")}: <strong>{label(choice.level)}</strong>
        </p>
      )}
      {!choice.canWrite && <p className="hint">{t("readOnly")}</p>}
    </div>
  );
}

/** Where a value comes from: set in this context (no owner), else the context it is inherited from. */
export function originOf(t: T, level: Level, owner: Owner | undefined): string {
  if (!owner) return level === "org" ? t("originHereOrg") : level === "instance" ? t("originHereInstance") : t("originHereSystem");
  if (owner.type === OwnerType.SYSTEM) return t("originSystem");
  if (owner.type === OwnerType.INSTANCE) return t("originInstance");
  return t("originOrg", { id: owner.id });
}

/** The context's own last change of these settings. */
export function LastChange({ details }: { details: Details | undefined }) {
  const t = useT(messages);
  const lang = useLanguage();
  if (!details) return null;
  return <p className="hint">{details.changeDate ? t("lastChange", { date: formatDate(lang, timestampDate(details.changeDate)) }) : t("neverChanged")}</p>;
}

/** A <select> with a label, a hint and the error the server named for it. */
export function SelectField({
  label,
  name,
  value,
  onChange,
  options,
  error,
  hint,
}: {
  label: ReactNode;
  name: string;
  value: string;
  onChange: (v: string) => void;
  options: { value: string; label: string }[];
  error?: FormError;
  hint?: string;
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
        aria-invalid={mine ? true : undefined}
        aria-describedby={mine || hint ? `${id}-d` : undefined}
      >
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      {(mine || hint) && (
        <div id={`${id}-d`} className={mine ? "field-error" : "hint"}>
          {mine ?? hint}
        </div>
      )}
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
      {hint && (
        <div id={`${id}-d`} className="hint">
          {hint}
        </div>
      )}
    </div>
  );
}

/** A labelled multi-line text; `name` is the request's field path. */
export function TextArea({
  label,
  name,
  value,
  onChange,
  error,
  hint,
  rows = 4,
}: {
  label: string;
  name: string;
  value: string;
  onChange: (v: string) => void;
  error?: FormError;
  hint?: string;
  rows?: number;
}) {
  const id = useId();
  const mine = error?.field === name ? error.message : undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        name={name}
        rows={rows}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        aria-invalid={mine ? true : undefined}
        aria-describedby={mine || hint ? `${id}-d` : undefined}
      />
      {(mine || hint) && (
        <div id={`${id}-d`} className={mine ? "field-error" : "hint"}>
          {mine ?? hint}
        </div>
      )}
    </div>
  );
}

// ---- properties ----------------------------------------------------------------------------------------------

export type PropType = "bool" | "uint64" | "duration" | "string" | "color" | "select" | "strings" | "choices";

export interface PropDef {
  /** The proto field's name (snake case), as the server names it in errors. */
  name: string;
  label: string;
  type: PropType;
  hint?: string;
  /** For "select" and "choices". */
  options?: { value: string; label: string }[];
  /** An input type for "string" (url). */
  inputType?: string;
}

/** A Resolved* message's shape: the value in force, and the context it is inherited from. */
export interface Resolved {
  value?: unknown;
  owner?: Owner | undefined;
}

type Draft = boolean | string | string[] | { amount: string; unit: number };

/** The generated messages' name of a proto field. */
export const localName = (name: string) => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

const UNITS = [86400, 3600, 60, 1];

function draftOf(type: PropType, value: unknown): Draft {
  switch (type) {
    case "bool":
      return value === true;
    case "uint64":
      return String(value ?? 0);
    case "duration": {
      const d = value as { seconds: bigint; nanos: number } | undefined;
      const seconds = Number(d?.seconds ?? 0n);
      const unit = UNITS.find((u) => seconds % u === 0 && seconds >= u) ?? (seconds === 0 ? 3600 : 1);
      return { amount: String(seconds / unit), unit };
    }
    case "strings":
    case "choices":
      return [...((value as string[] | undefined) ?? [])];
    default:
      return String(value ?? "");
  }
}

const same = (a: Draft, b: Draft, type: PropType) =>
  type === "duration"
    ? secondsOf(a as { amount: string; unit: number }) === secondsOf(b as { amount: string; unit: number })
    : JSON.stringify(type === "strings" ? (a as string[]).filter((s) => s.trim()) : a) === JSON.stringify(b);

const secondsOf = (d: { amount: string; unit: number }) => Number(d.amount) * d.unit;

/** The `set` value of a Set* message, or what is wrong with the input. */
function setValueOf(type: PropType, draft: Draft): { value: unknown } | { wrong: "number" } {
  switch (type) {
    case "uint64":
      return /^\d+$/.test((draft as string).trim()) ? { value: BigInt((draft as string).trim()) } : { wrong: "number" };
    case "duration": {
      const seconds = secondsOf(draft as { amount: string; unit: number });
      if (!Number.isFinite(seconds) || seconds < 0 || (draft as { amount: string }).amount.trim() === "") return { wrong: "number" };
      return { value: { seconds: BigInt(Math.floor(seconds)), nanos: Math.round((seconds % 1) * 1e9) } };
    }
    case "strings":
      return { value: { value: (draft as string[]).map((s) => s.trim()).filter(Boolean) } };
    case "choices":
      return { value: { value: draft as string[] } };
    default:
      return { value: draft };
  }
}

/** The Set* message (by generated field name) that resets a property to the inherited value. */
export const resetOf = (name: string) => ({ [localName(name)]: { value: { case: "reset", value: true } } });

/**
 * A card with a form of properties of one kind: each shows its value and where it comes from, may be changed
 * (only changed ones are sent, as `set`) or reset to the inherited value (a confirmation first).
 */
export function PropertiesCard({
  title,
  intro,
  defs,
  resolved,
  details,
  level,
  canWrite,
  save,
  loading,
  loadError,
}: {
  title: string;
  intro?: string;
  defs: PropDef[];
  resolved: Record<string, Resolved | undefined> | undefined;
  details?: Details;
  level: Level;
  canWrite: boolean;
  /** Sends the Set* fields given (by generated name). */
  save: (settings: Record<string, unknown>) => Promise<unknown>;
  loading: boolean;
  loadError: unknown;
}) {
  const t = useT(messages);
  const core = useT(coreMessages);
  const queryClient = useQueryClient();
  const headingId = useId();
  const [edits, setEdits] = useState<Record<string, Draft>>({});
  const [error, setError] = useState<FormError>();
  const [status, setStatus] = useState("");
  const [busy, setBusy] = useState(false);

  const initial = (d: PropDef) => draftOf(d.type, resolved?.[localName(d.name)]?.value);
  const current = (d: PropDef) => edits[d.name] ?? initial(d);
  const edit = (d: PropDef, v: Draft) => {
    setEdits((e) => ({ ...e, [d.name]: v }));
    setStatus("");
  };

  /** Sends the change; then drops the edits it covered (a reset keeps the other properties' edits). */
  async function send(settings: Record<string, unknown>, done: string, covered?: string) {
    setBusy(true);
    setError(undefined);
    setStatus("");
    try {
      await save(settings);
      await queryClient.invalidateQueries();
      setEdits((e) => (covered ? Object.fromEntries(Object.entries(e).filter(([k]) => k !== covered)) : {}));
      setStatus(done);
    } catch (err) {
      setError(errorOf(err));
    } finally {
      setBusy(false);
    }
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    const settings: Record<string, unknown> = {};
    for (const d of defs) {
      const v = current(d);
      if (same(v, initial(d), d.type)) continue;
      const set = setValueOf(d.type, v);
      if ("wrong" in set) {
        setError({ field: `settings.${d.name}.set`, message: t("wrongNumber") });
        setStatus("");
        return;
      }
      settings[localName(d.name)] = { value: { case: "set", value: set.value } };
    }
    if (!Object.keys(settings).length) {
      setError(undefined);
      setStatus(t("nothingChanged"));
      return;
    }
    await send(settings, core("saved"));
  }

  // the fields whose errors show at an input (a list's items each)
  const fields = defs.flatMap((d) =>
    d.type === "strings"
      ? (current(d) as string[]).map((_, i) => `settings.${d.name}.set.value[${i}]`)
      : d.type === "bool" || d.type === "choices"
        ? []
        : [`settings.${d.name}.set`],
  );

  return (
    <section className="card" aria-labelledby={headingId}>
      <h2 id={headingId}>{title}</h2>
      {intro && <p>{intro}</p>}
      <LastChange details={details} />
      {loading && <p role="status">{core("loading")}</p>}
      {loadError ? <ErrorText error={errorOf(loadError)} /> : null}
      {resolved && (
        <form onSubmit={submit} noValidate aria-labelledby={headingId}>
          <Group disabled={!canWrite || busy}>
            {defs.map((d) => {
              const r = resolved[localName(d.name)];
              const origin = originOf(t, level, r?.owner);
              return (
                <div key={d.name}>
                  <PropInput def={d} value={current(d)} onChange={(v) => edit(d, v)} origin={origin} error={error} t={t} />
                  {canWrite && !r?.owner && <ResetButton name={d.label} t={t} onConfirm={() => send(resetOf(d.name), t("resetDone"), d.name)} />}
                </div>
              );
            })}
          </Group>
          <ErrorText error={error} fields={fields} />
          {canWrite && (
            <div className="buttons">
              <button type="submit" className="primary" disabled={busy}>
                {core("save")}
              </button>
            </div>
          )}
          <Status text={status} />
        </form>
      )}
    </section>
  );
}

/** The input of one property, by its type; the hint says where the value comes from. */
function PropInput({
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
          <SelectField
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
      return <SelectField label={def.label} name={name} value={value as string} onChange={onChange} options={def.options ?? []} hint={hint} error={error} />;
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

const HEX = /^#[0-9a-f]{6}$/;

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

/** A colour sample next to its value (the value is the information; the sample only shows it). */
export function Swatch({ color }: { color: string }) {
  if (!HEX.test(color)) return <code>{color}</code>;
  return (
    <span>
      <span
        aria-hidden="true"
        style={{
          display: "inline-block",
          width: "1.1em",
          height: "1.1em",
          verticalAlign: "text-bottom",
          marginRight: "0.4em",
          border: "1px solid var(--border)",
          borderRadius: "3px",
          backgroundColor: color,
        }}
      />
      <code>{color}</code>
    </span>
  );
}

/** Disables the inputs within while read-only or busy, without a frame of its own. */
export function Group({ disabled, children }: { disabled: boolean; children: ReactNode }) {
  return (
    <fieldset disabled={disabled} style={{ border: 0, padding: 0, margin: 0, minWidth: 0 }}>
      {children}
    </fieldset>
  );
}

/** Removes the value set at this level (after a confirmation): the inherited one applies again. */
export function ResetButton({ name, t, onConfirm }: { name: string; t: T; onConfirm: () => unknown }) {
  return (
    <div className="toolbar">
      <ConfirmButton label={t("resetProp", { name })} question={t("resetQuestion", { name })} className="" onConfirm={onConfirm} />
    </div>
  );
}
