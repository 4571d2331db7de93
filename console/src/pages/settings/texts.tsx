// Texts of the login UI and the messages: one language at a time, every key with its text in force and where
// it comes from; a text is overridden here or reset to the inherited one. The API returns every key at once:
// search, filter, sorting and paging happen here.
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useMemo, useState } from "react";
import type { ResolvedString } from "../../../../gen/svc/settings/object/v3alpha/object_pb.js";
import { LanguageSettingsService } from "../../../../gen/svc/settings/language/v3alpha/language_service_pb.js";
import { TextSettingsService } from "../../../../gen/svc/settings/text/v3alpha/text_service_pb.js";
import { errorOf } from "../../api";
import { useLanguage, useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/settings";
import { CheckField, ConfirmButton, DataTable, ErrorText, Field, type FormError, Modal, Select, Status, TextArea } from "../../ui";
import { LastChange, type LevelChoice, originOf, SettingsPage, useLevel } from "./common";
import { useLanguageName } from "./languages";

interface Row {
  key: string;
  value: string;
  here: boolean;
  origin: string;
  text: ResolvedString;
}

const PAGE = 25;

/** The request field of a text, as the server names it in errors. */
const fieldOfKey = (key: string) => `texts["${key}"].set`;

/** A server error of SetTexts: errorOf does not read the quoted key of `texts["key"].set`. */
function textErrorOf(err: unknown): FormError {
  const e = errorOf(err);
  const field = /^invalid (texts\["[^"]*"\]\.set):/.exec(e.message)?.[1];
  return field ? { ...e, field } : e;
}

export function TextSettings() {
  const t = useT(messages);
  const core = useT(coreMessages);
  const choice = useLevel();
  const { ctx, level } = choice;
  const consoleLang = useLanguage();
  const nameOf = useLanguageName();
  const langs = useQuery(LanguageSettingsService.method.resolveLanguages, { ctx });
  const supported = langs.data?.settings?.supportedLanguages?.value.map((l) => l.key) ?? [consoleLang];
  const [language, setLanguage] = useState<string>(consoleLang);
  const texts = useQuery(TextSettingsService.method.resolveTexts, { ctx, language }, { enabled: supported.includes(language) });
  const [search, setSearch] = useState("");
  const [group, setGroup] = useState("all");
  const [onlyHere, setOnlyHere] = useState(false);
  const [sort, setSort] = useState({ column: "key", asc: true });
  const [offset, setOffset] = useState(0);
  const [editing, setEditing] = useState<Row>();
  const [status, setStatus] = useState("");

  const rows = useMemo(() => {
    const all: Row[] = Object.entries(texts.data?.texts ?? {}).map(([key, text]) => ({
      key,
      value: text.value,
      here: !text.owner,
      origin: originOf(t, level, text.owner),
      text,
    }));
    const needle = search.trim().toLowerCase();
    const shown = all.filter(
      (r) =>
        (group === "all" || r.key.startsWith(`${group}.`)) &&
        (!onlyHere || r.here) &&
        (!needle || r.key.toLowerCase().includes(needle) || r.value.toLowerCase().includes(needle)),
    );
    const by = (r: Row) => (sort.column === "origin" ? `${r.here ? 0 : 1}${r.key}` : r.key);
    shown.sort((a, b) => by(a).localeCompare(by(b)) * (sort.asc ? 1 : -1));
    return shown;
  }, [texts.data, search, group, onlyHere, sort, t, level]);
  const page = rows.slice(offset, offset + PAGE);
  const filter = (f: () => void) => {
    f();
    setOffset(0);
  };

  return (
    <SettingsPage title={t("textsTitle")} intro={t("textsIntro")} choice={choice}>
      <section className="card">
        <h2>{t("textsCard")}</h2>
        <LastChange details={texts.data?.details} />
        <div className="toolbar">
          <Select
            markInvalid
            label={t("textLanguage")}
            name="language"
            value={language}
            onChange={(v) => filter(() => setLanguage(v))}
            options={supported.map((l) => ({ value: l, label: nameOf(l) }))}
          />
          <Field
            label={core("search")}
            name="search"
            type="search"
            value={search}
            onChange={(e) => filter(() => setSearch(e.target.value))}
            hint={t("textSearchHint")}
          />
          <Select
            markInvalid
            label={t("textGroup")}
            name="group"
            value={group}
            onChange={(v) => filter(() => setGroup(v))}
            options={[
              { value: "all", label: t("textGroupAll") },
              { value: "login", label: t("textGroupLogin") },
              { value: "message", label: t("textGroupMessage") },
            ]}
          />
          <CheckField label={t("onlyOverridden")} name="overridden" checked={onlyHere} onChange={(v) => filter(() => setOnlyHere(v))} />
        </div>
        {texts.error && <ErrorText error={errorOf(texts.error)} />}
        <Status text={status} />
        <DataTable<Row>
          caption={t("textsCaption", { language: nameOf(language) })}
          columns={[
            { key: "key", label: t("textKey"), sort: "key", render: (r) => <code>{r.key}</code> },
            { key: "value", label: t("textValue"), render: (r) => (r.value.length > 140 ? `${r.value.slice(0, 140)}…` : r.value) },
            { key: "origin", label: t("origin"), sort: "origin", render: (r) => r.origin },
            {
              key: "actions",
              label: core("actions"),
              render: (r) => (
                <button
                  type="button"
                  onClick={() => {
                    setStatus("");
                    setEditing(r);
                  }}
                >
                  {choice.canWrite ? t("edit") : core("details")}
                  <span className="visually-hidden"> {r.key}</span>
                </button>
              ),
            },
          ]}
          rows={texts.data ? page : undefined}
          rowKey={(r) => r.key}
          sort={sort}
          onSort={(column, asc) => filter(() => setSort({ column, asc }))}
          paging={{ offset, limit: PAGE, total: rows.length, onPage: setOffset }}
          loading={texts.isFetching}
        />
      </section>
      <Modal title={editing?.key ?? ""} open={!!editing} onClose={() => setEditing(undefined)}>
        {editing && (
          <TextEditor
            key={`${language}:${editing.key}`}
            row={editing}
            language={language}
            choice={choice}
            onDone={(done) => {
              setEditing(undefined);
              setStatus(done);
            }}
            onCancel={() => setEditing(undefined)}
          />
        )}
      </Modal>
    </SettingsPage>
  );
}

/** The form of one text: override it here, or reset it to the inherited text. */
function TextEditor({
  row,
  language,
  choice,
  onDone,
  onCancel,
}: {
  row: Row;
  language: string;
  choice: LevelChoice;
  onDone: (status: string) => void;
  onCancel: () => void;
}) {
  const t = useT(messages);
  const core = useT(coreMessages);
  const queryClient = useQueryClient();
  const set = useMutation(TextSettingsService.method.setTexts);
  const [value, setValue] = useState(row.value);
  const [error, setError] = useState<FormError>();
  const name = fieldOfKey(row.key);
  const placeholders = [...new Set([...row.value.matchAll(/\{\w+\}/g)].map((m) => m[0]))];
  const hint = [row.origin, placeholders.length ? t("keepPlaceholders", { list: placeholders.join(", ") }) : ""].filter(Boolean).join(". ");

  async function send(text: { case: "set"; value: string } | { case: "reset"; value: boolean }, done: string) {
    setError(undefined);
    try {
      await set.mutateAsync({ ctx: choice.ctx, language, texts: { [row.key]: { value: text } } });
      await queryClient.invalidateQueries();
      onDone(done);
    } catch (err) {
      setError(textErrorOf(err));
    }
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (value === row.value && !row.here) {
      // the inherited text, unchanged: nothing to override
      onDone(t("nothingChanged"));
      return;
    }
    await send({ case: "set", value }, core("saved"));
  }

  return (
    <form onSubmit={submit} noValidate>
      {choice.canWrite ? (
        <TextArea
          label={t("textValue")}
          name={name}
          value={value}
          onChange={(e) => setValue(e.target.value)}
          rows={row.key.endsWith(".text") ? 8 : 2}
          hint={hint}
          error={error}
        />
      ) : (
        <>
          <p className="hint">{hint}</p>
          <pre className="json">{row.value}</pre>
        </>
      )}
      <ErrorText error={error} fields={[name]} />
      <div className="buttons">
        {choice.canWrite && (
          <button type="submit" className="primary" disabled={set.isPending}>
            {core("save")}
          </button>
        )}
        {choice.canWrite && row.here && (
          <ConfirmButton
            label={t("resetText")}
            question={t("resetQuestion", { name: row.key })}
            className=""
            onConfirm={() => send({ case: "reset", value: true }, t("resetDone"))}
          />
        )}
        <button type="button" onClick={onCancel}>
          {core("cancel")}
        </button>
      </div>
    </form>
  );
}
