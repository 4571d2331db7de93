// Feature flags of the chosen level (organisation, instance or system): each flag's value and the level it comes
// from; set the changed ones, or reset all of the level's own (the API resets a level's flags only at once).
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useId, useState } from "react";
import { FeatureService, type GetFeaturesResponse, Source } from "../../../../gen/svc/feature/v2/feature_service_pb.js";
import { useAccess } from "../../access";
import { errorOf } from "../../api";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/settings";
import { CheckField, ConfirmButton, ErrorText, type FormError, Group, Status } from "../../ui";
import { LastChange, type Level, SettingsPage, type T, useLevel } from "./common";

const FLAGS = ["multitenancyResourcesApi", "multitenancySettings", "oidcTokenExchange"] as const;
type Flag = (typeof FLAGS)[number];

function sourceText(t: T, level: Level, source: Source): string {
  const here = { org: Source.ORGANIZATION, instance: Source.INSTANCE, system: Source.SYSTEM }[level];
  if (source === here) return level === "org" ? t("originHereOrg") : level === "instance" ? t("originHereInstance") : t("originHereSystem");
  if (source === Source.SYSTEM) return t("originSystem");
  if (source === Source.INSTANCE) return t("originInstance");
  if (source === Source.ORGANIZATION) return t("originOrgPlain");
  return t("sourceDefault");
}

export function FeatureSettings() {
  const t = useT(messages);
  const core = useT(coreMessages);
  const choice = useLevel();
  const { level, orgId } = choice;
  const access = useAccess();
  const queryClient = useQueryClient();
  const headingId = useId();
  const may = (action: "read" | "write" | "delete") =>
    level === "org"
      ? access.inOrg(`org.feature.${action}`, orgId)
      : level === "instance"
        ? access.everywhere(`iam.feature.${action}`)
        : access.inSystem(`system.feature.${action}`);
  const canRead = may("read");
  const org = useQuery(FeatureService.method.getOrganizationFeatures, { organizationId: orgId }, { enabled: canRead && level === "org" });
  const instance = useQuery(FeatureService.method.getInstanceFeatures, {}, { enabled: canRead && level === "instance" });
  const system = useQuery(FeatureService.method.getSystemFeatures, {}, { enabled: canRead && level === "system" });
  const q = level === "org" ? org : level === "instance" ? instance : system;
  const setOrg = useMutation(FeatureService.method.setOrganizationFeatures);
  const setInstance = useMutation(FeatureService.method.setInstanceFeatures);
  const setSystem = useMutation(FeatureService.method.setSystemFeatures);
  const resetOrg = useMutation(FeatureService.method.resetOrganizationFeatures);
  const resetInstance = useMutation(FeatureService.method.resetInstanceFeatures);
  const resetSystem = useMutation(FeatureService.method.resetSystemFeatures);
  const [edits, setEdits] = useState<Partial<Record<Flag, boolean>>>({});
  const [error, setError] = useState<FormError>();
  const [status, setStatus] = useState("");
  const [busy, setBusy] = useState(false);

  const data = q.data as GetFeaturesResponse | undefined;
  const now = (f: Flag) => data?.[f]?.enabled === true;
  const value = (f: Flag) => edits[f] ?? now(f);

  async function run(action: () => Promise<unknown>, done: string) {
    setBusy(true);
    setError(undefined);
    setStatus("");
    try {
      await action();
      await queryClient.invalidateQueries();
      setEdits({});
      setStatus(done);
    } catch (err) {
      setError(errorOf(err));
    } finally {
      setBusy(false);
    }
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    const changed = Object.fromEntries(FLAGS.filter((f) => value(f) !== now(f)).map((f) => [f, value(f)]));
    if (!Object.keys(changed).length) {
      setStatus(t("nothingChanged"));
      return;
    }
    await run(
      () =>
        level === "org"
          ? setOrg.mutateAsync({ organizationId: orgId, ...changed })
          : level === "instance"
            ? setInstance.mutateAsync(changed)
            : setSystem.mutateAsync(changed),
      core("saved"),
    );
  }

  const label: Record<Flag, string> = {
    multitenancyResourcesApi: t("flagResources"),
    multitenancySettings: t("flagSettings"),
    oidcTokenExchange: t("flagTokenExchange"),
  };
  const hint: Record<Flag, string> = {
    multitenancyResourcesApi: t("flagResourcesHint"),
    multitenancySettings: t("flagSettingsHint"),
    oidcTokenExchange: level === "org" ? t("flagTokenExchangeOrgHint") : t("flagTokenExchangeHint"),
  };
  const canWrite = may("write");
  const ownFlags = FLAGS.some((f) => data?.[f]?.source === { org: Source.ORGANIZATION, instance: Source.INSTANCE, system: Source.SYSTEM }[level]);

  return (
    <SettingsPage title={t("featuresTitle")} intro={t("featuresIntro")} choice={choice}>
      <section className="card" aria-labelledby={headingId}>
        <h2 id={headingId}>{t("featuresCard")}</h2>
        {!canRead && <p>{t("featuresNoAccess")}</p>}
        <LastChange details={data?.details} />
        {canRead && q.isPending && <p role="status">{core("loading")}</p>}
        {q.error && <ErrorText error={errorOf(q.error)} />}
        {data && (
          <form onSubmit={submit} noValidate aria-labelledby={headingId}>
            <Group disabled={!canWrite || busy}>
              {FLAGS.map((f) => (
                <div key={f}>
                  <CheckField
                    label={label[f]}
                    name={f.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}
                    checked={value(f)}
                    onChange={(v) => {
                      setEdits((e) => ({ ...e, [f]: v }));
                      setStatus("");
                    }}
                    hint={`${sourceText(t, level, data[f]?.source ?? Source.DEFAULT)}. ${hint[f]}`}
                  />
                </div>
              ))}
            </Group>
            <ErrorText error={error} />
            <div className="buttons">
              {canWrite && (
                <button type="submit" className="primary" disabled={busy}>
                  {core("save")}
                </button>
              )}
              {may("delete") && ownFlags && (
                <ConfirmButton
                  label={t("resetFlags")}
                  question={t("resetFlagsQuestion")}
                  onConfirm={() =>
                    run(
                      () =>
                        level === "org"
                          ? resetOrg.mutateAsync({ organizationId: orgId })
                          : level === "instance"
                            ? resetInstance.mutateAsync({})
                            : resetSystem.mutateAsync({}),
                      t("resetDone"),
                    )
                  }
                />
              )}
            </div>
            <Status text={status} />
          </form>
        )}
      </section>
    </SettingsPage>
  );
}
