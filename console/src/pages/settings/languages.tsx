// Language settings: the default language, the languages in use (chosen from the supported ones), each set
// here or reset to the inherited value.
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useId, useState } from "react";
import { LanguageSettingsService } from "../../../../gen/svc/settings/language/v3alpha/language_service_pb.js";
import { errorOf } from "../../api";
import { useLanguage, useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/settings";
import { CheckField, ErrorText, type FormError, Group, Select, Status } from "../../ui";
import { LastChange, originOf, ResetButton, SettingsPage, useLevel } from "./common";

/** "Deutsch (de)" in the console's language. */
export function useLanguageName(): (code: string) => string {
  const lang = useLanguage();
  let names: Intl.DisplayNames | undefined;
  try {
    names = new Intl.DisplayNames([lang], { type: "language" });
  } catch {
    names = undefined;
  }
  return (code) => {
    const name = names?.of(code);
    return name && name !== code ? `${name} (${code})` : code;
  };
}

export function LanguageSettings() {
  const t = useT(messages);
  const core = useT(coreMessages);
  const choice = useLevel();
  const { ctx, level, canWrite } = choice;
  const nameOf = useLanguageName();
  const queryClient = useQueryClient();
  const q = useQuery(LanguageSettingsService.method.resolveLanguages, { ctx });
  const set = useMutation(LanguageSettingsService.method.setLanguages);
  const [defaultEdit, setDefaultEdit] = useState<string>();
  const [restrictedEdit, setRestrictedEdit] = useState<string[]>();
  const [error, setError] = useState<FormError>();
  const [status, setStatus] = useState("");
  const headingId = useId();
  const restrictedId = useId();

  const s = q.data?.settings;
  const supported = s?.supportedLanguages?.value.map((l) => l.key) ?? [];
  const restrictedNow = s?.restrictedLanguages?.value.map((l) => l.key) ?? [];
  const defaultNow = s?.defaultLanguage?.value ?? "";
  const defaultLanguage = defaultEdit ?? defaultNow;
  const restricted = restrictedEdit ?? restrictedNow;

  async function send(settings: Parameters<typeof set.mutateAsync>[0]["settings"], done: string) {
    setError(undefined);
    setStatus("");
    try {
      await set.mutateAsync({ ctx, settings });
      await queryClient.invalidateQueries();
      setDefaultEdit(undefined);
      setRestrictedEdit(undefined);
      setStatus(done);
    } catch (err) {
      setError(errorOf(err));
    }
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    const changedDefault = defaultLanguage !== defaultNow;
    const changedRestricted = JSON.stringify(restricted) !== JSON.stringify(restrictedNow);
    if (changedRestricted && restricted.length === 0) {
      setError({ field: "settings.restricted_languages.languages", message: t("chooseOneLanguage") });
      return;
    }
    if (!changedDefault && !changedRestricted) {
      setError(undefined);
      setStatus(t("nothingChanged"));
      return;
    }
    await send(
      {
        ...(changedDefault ? { defaultLanguage: { key: defaultLanguage } } : {}),
        ...(changedRestricted ? { restrictedLanguages: { languages: restricted.map((key) => ({ key })) } } : {}),
      },
      core("saved"),
    );
  }

  const restrictedError = error?.field?.startsWith("settings.restricted_languages") ? error.message : undefined;
  return (
    <SettingsPage title={t("languagesTitle")} intro={t("languagesIntro")} choice={choice}>
      <section className="card" aria-labelledby={headingId}>
        <h2 id={headingId}>{t("languagesCard")}</h2>
        <LastChange details={q.data?.details} />
        {q.isPending && <p role="status">{core("loading")}</p>}
        {q.error && <ErrorText error={errorOf(q.error)} />}
        {s && (
          <form onSubmit={submit} noValidate aria-labelledby={headingId}>
            <Group disabled={!canWrite || set.isPending}>
              <div>
                <Select
                  markInvalid
                  label={t("defaultLanguage")}
                  name="settings.default_language.key"
                  value={defaultLanguage}
                  onChange={(v) => {
                    setDefaultEdit(v);
                    setStatus("");
                  }}
                  options={supported.map((l) => ({ value: l, label: nameOf(l) }))}
                  hint={`${originOf(t, level, s.defaultLanguage?.owner)}. ${t("defaultLanguageHint")}`}
                  error={error}
                />
                {canWrite && !s.defaultLanguage?.owner && (
                  <ResetButton name={t("defaultLanguage")} t={t} onConfirm={() => send({ resetDefaultLanguage: true }, t("resetDone"))} />
                )}
              </div>
              <div>
                <fieldset aria-describedby={`${restrictedId}-d`}>
                  <legend>{t("restrictedLanguages")}</legend>
                  <div id={`${restrictedId}-d`} className={restrictedError ? "field-error" : "hint"}>
                    {restrictedError ?? `${originOf(t, level, s.restrictedLanguages?.owner)}. ${t("restrictedLanguagesHint")}`}
                  </div>
                  {supported.map((l) => (
                    <CheckField
                      key={l}
                      label={nameOf(l)}
                      name="settings.restricted_languages.languages"
                      checked={restricted.includes(l)}
                      onChange={(on) => {
                        // the order of the supported languages
                        setRestrictedEdit(supported.filter((x) => (x === l ? on : restricted.includes(x))));
                        setStatus("");
                      }}
                    />
                  ))}
                </fieldset>
                {canWrite && !s.restrictedLanguages?.owner && (
                  <ResetButton name={t("restrictedLanguages")} t={t} onConfirm={() => send({ resetRestrictedLanguages: true }, t("resetDone"))} />
                )}
              </div>
            </Group>
            <ErrorText error={error} fields={["settings.default_language.key", ...(restrictedError && error?.field ? [error.field] : [])]} />
            {canWrite && (
              <div className="buttons">
                <button type="submit" className="primary" disabled={set.isPending}>
                  {core("save")}
                </button>
              </div>
            )}
            <Status text={status} />
          </form>
        )}
      </section>
      {s && (
        <section className="card">
          <h2>{t("supportedLanguages")}</h2>
          <p>{t("supportedLanguagesHint")}</p>
          <ul>
            {supported.map((l) => (
              <li key={l}>{nameOf(l)}</li>
            ))}
          </ul>
        </section>
      )}
    </SettingsPage>
  );
}
