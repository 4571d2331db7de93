// A card of settings properties of one kind: each shows its value and where it comes from, may be changed (only what
// the user changed is sent, as `set`) or reset to the inherited value.
import { type FormEvent, useId, useState } from "react";
import type { Owner } from "../../../../gen/svc/object/v3alpha/object_pb.js";
import type { Details } from "../../../../gen/svc/settings/object/v3alpha/object_pb.js";
import { useQueryClient } from "@tanstack/react-query";
import { errorOf } from "../../api";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/settings";
import { ErrorText, type FormError, Group, Status } from "../../ui";
import { LastChange, type Level, type LevelChoice, originOf, ResetButton } from "./common";
import { PropInput } from "./prop-inputs";

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

export type Draft = boolean | string | string[] | { amount: string; unit: number };

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

/** What a card needs of a Resolve* query (connect-query's result). */
interface ResolveQuery {
  data?: { settings?: unknown; details?: Details };
  isPending: boolean;
  error: unknown;
}

/** A PropertiesCard of the settings a Resolve* query read at the level chosen; `noDetails` leaves out the last change. */
export function ResolvedCard({
  q,
  choice,
  noDetails,
  ...card
}: {
  title: string;
  intro?: string;
  defs: PropDef[];
  q: ResolveQuery;
  choice: LevelChoice;
  noDetails?: boolean;
  save: (settings: Record<string, unknown>) => Promise<unknown>;
}) {
  return (
    <PropertiesCard
      {...card}
      resolved={q.data?.settings as Record<string, Resolved | undefined> | undefined}
      details={noDetails ? undefined : q.data?.details}
      level={choice.level}
      canWrite={choice.canWrite}
      loading={q.isPending}
      loadError={q.error}
    />
  );
}
