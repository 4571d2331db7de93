// Branding: changes go to the context's preview (SetBranding, UploadBrandingAsset); the preview is compared with
// the branding in force (ResolveBranding with and without preview) and activated (ActivateBranding).
import type { MessageInitShape } from "@bufbuild/protobuf";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { BrandingSettingsService, type ResolvedBranding, type SetBrandingSchema } from "../../../../gen/svc/settings/branding/v3alpha/branding_service_pb.js";
import { errorOf } from "../../api";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/settings";
import { ConfirmButton, ErrorText, Field, type FormError, Status } from "../../ui";
import { LastChange, type Level, originOf, SettingsPage, type T, Swatch, useLevel } from "./common";
import { localName, type PropDef, type Resolved, ResolvedCard, resetOf } from "./properties";

type Settings = Record<string, Resolved | undefined>;
const ASSETS = ["logo", "logo_dark", "icon", "icon_dark", "font"] as const;
type AssetKind = (typeof ASSETS)[number];
const COLOURS = ["primary_color", "background_color", "warn_color", "font_color"] as const;

export function BrandingSettings() {
  const t = useT(messages);
  const choice = useLevel();
  const { ctx, level, canWrite } = choice;
  const preview = useQuery(BrandingSettingsService.method.resolveBranding, { ctx, preview: true });
  const active = useQuery(BrandingSettingsService.method.resolveBranding, { ctx, preview: false });
  const set = useMutation(BrandingSettingsService.method.setBranding);
  const save = (s: Record<string, unknown>) => set.mutateAsync({ ctx, settings: s as MessageInitShape<typeof SetBrandingSchema> });
  const colourLabel = (name: string) => t(localName(name) as keyof (typeof messages)["en"]);

  const light: PropDef[] = COLOURS.map((c) => ({ name: c, label: colourLabel(c), type: "color", hint: t("colourHint") }));
  const dark: PropDef[] = COLOURS.map((c) => ({ name: `${c}_dark`, label: t("inDark", { name: colourLabel(c) }), type: "color", hint: t("colourHint") }));
  const appearance: PropDef[] = [
    {
      name: "theme_mode",
      label: t("themeMode"),
      type: "select",
      options: [
        { value: "auto", label: t("themeAuto") },
        { value: "light", label: t("themeLight") },
        { value: "dark", label: t("themeDark") },
      ],
    },
    { name: "hide_product_branding", label: t("hideProductBranding"), type: "bool", hint: t("hideProductBrandingHint") },
    { name: "custom_values", label: t("customValues"), type: "strings", hint: t("customValuesHint") },
  ];
  const card = (title: string, defs: PropDef[], intro?: string) => (
    <ResolvedCard title={title} intro={intro} defs={defs} q={preview} choice={choice} noDetails save={save} />
  );

  return (
    <SettingsPage title={t("brandingTitle")} intro={t("brandingIntro")} choice={choice}>
      <PreviewCard preview={preview.data?.settings} active={active.data?.settings} level={level} canWrite={canWrite} ctx={ctx} t={t} />
      {card(t("lightColours"), light, t("previewEditHint"))}
      {card(t("darkColours"), dark, t("previewEditHint"))}
      {card(t("appearance"), appearance, t("previewEditHint"))}
      <AssetsCard resolved={preview.data?.settings as Settings | undefined} level={level} canWrite={canWrite} ctx={ctx} save={save} t={t} />
      <LastChange details={preview.data?.details} />
    </SettingsPage>
  );
}

/** The preview next to the branding in force, with samples of both modes, and its activation. */
function PreviewCard({
  preview,
  active,
  level,
  canWrite,
  ctx,
  t,
}: {
  preview: ResolvedBranding | undefined;
  active: ResolvedBranding | undefined;
  level: Level;
  canWrite: boolean;
  ctx: ReturnType<typeof useLevel>["ctx"];
  t: T;
}) {
  const core = useT(coreMessages);
  const queryClient = useQueryClient();
  const activate = useMutation(BrandingSettingsService.method.activateBranding);
  const [status, setStatus] = useState("");
  const [error, setError] = useState<FormError>();
  if (!preview || !active) return null;
  const p = preview as unknown as Settings;
  const a = active as unknown as Settings;
  const names = [...COLOURS, ...COLOURS.map((c) => `${c}_dark`), "theme_mode", "hide_product_branding", "custom_values", ...ASSETS];
  const label = (name: string) =>
    name.endsWith("_dark") && (COLOURS as readonly string[]).includes(name.slice(0, -5))
      ? t("inDark", { name: t(localName(name.slice(0, -5)) as keyof (typeof messages)["en"]) })
      : t(localName(name) as keyof (typeof messages)["en"]);
  const show = (name: string, r: Resolved | undefined) => {
    const v = r?.value;
    if (name.includes("color")) return <Swatch color={String(v)} />;
    if (typeof v === "boolean") return v ? t("yes") : t("no");
    if (Array.isArray(v)) return v.length ? v.join(", ") : t("none");
    if ((ASSETS as readonly string[]).includes(name)) return <AssetView kind={name as AssetKind} sha={String(v ?? "")} t={t} />;
    return String(v ?? "");
  };
  const differing = names.filter((n) => JSON.stringify(p[localName(n)]?.value) !== JSON.stringify(a[localName(n)]?.value));

  return (
    <section className="card" aria-labelledby="branding-preview">
      <h2 id="branding-preview">{t("previewCard")}</h2>
      <p>{differing.length ? t("previewDiffers", { n: differing.length }) : t("previewSame")}</p>
      <div className="toolbar">
        <Sample settings={preview} dark={false} t={t} />
        <Sample settings={preview} dark t={t} />
      </div>
      <div className="table-wrap">
        <table>
          <caption>{t("previewTable")}</caption>
          <thead>
            <tr>
              <th scope="col">{t("property")}</th>
              <th scope="col">{t("previewColumn")}</th>
              <th scope="col">{t("activeColumn")}</th>
            </tr>
          </thead>
          <tbody>
            {names.map((n) => (
              <tr key={n}>
                <th scope="row">
                  {label(n)}
                  {differing.includes(n) && <span className="hint"> ({t("changed")})</span>}
                </th>
                <td>
                  {show(n, p[localName(n)])}
                  <div className="hint">{originOf(t, level, p[localName(n)]?.owner)}</div>
                </td>
                <td>
                  {show(n, a[localName(n)])}
                  <div className="hint">{originOf(t, level, a[localName(n)]?.owner)}</div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ErrorText error={error} />
      {canWrite && (
        <div className="buttons">
          <ConfirmButton
            label={t("activate")}
            question={t("activateQuestion")}
            className="primary"
            onConfirm={async () => {
              setError(undefined);
              setStatus("");
              try {
                await activate.mutateAsync({ ctx });
                await queryClient.invalidateQueries();
                setStatus(t("activated"));
              } catch (err) {
                setError(errorOf(err));
              }
            }}
          />
        </div>
      )}
      <Status text={status || (activate.isPending ? core("loading") : "")} />
    </section>
  );
}

/** What the login UI looks like in one mode with these colours (a sample: every value is in the table too). */
function Sample({ settings, dark, t }: { settings: ResolvedBranding; dark: boolean; t: T }) {
  const c = (name: string) => String((settings as unknown as Settings)[localName(dark ? `${name}_dark` : name)]?.value ?? "");
  const logo = dark ? settings.logoDark?.value || settings.logo?.value : settings.logo?.value;
  return (
    <figure
      style={{
        margin: 0,
        padding: "0.8rem 1rem",
        borderRadius: "8px",
        border: "1px solid var(--border)",
        backgroundColor: c("background_color"),
        color: c("font_color"),
      }}
    >
      <figcaption>{dark ? t("sampleDark") : t("sampleLight")}</figcaption>
      {logo && <img src={`/ui/login/assets/${logo}`} alt={t("logo")} style={{ maxHeight: "2.5rem", display: "block", margin: "0.4rem 0" }} />}
      <p>{t("sampleText")}</p>
      <p style={{ color: c("warn_color") }}>{t("sampleWarning")}</p>
      <span
        style={{ display: "inline-block", padding: "0.35rem 0.7rem", borderRadius: "6px", backgroundColor: c("primary_color"), color: c("background_color") }}
      >
        {t("sampleButton")}
      </span>
    </figure>
  );
}

function AssetView({ kind, sha, t }: { kind: AssetKind; sha: string; t: T }) {
  if (!sha) return <>{t("none")}</>;
  if (kind === "font") return <code title={sha}>{`${sha.slice(0, 12)}…`}</code>;
  return (
    <img
      src={`/ui/login/assets/${sha}`}
      alt={t(localName(kind) as keyof (typeof messages)["en"])}
      style={{ maxHeight: "2.5rem", maxWidth: "10rem", verticalAlign: "middle" }}
    />
  );
}

/** Logo, icon (each also for dark mode) and font: upload into the preview, remove, or reset to the inherited one. */
function AssetsCard({
  resolved,
  level,
  canWrite,
  ctx,
  save,
  t,
}: {
  resolved: Settings | undefined;
  level: Level;
  canWrite: boolean;
  ctx: ReturnType<typeof useLevel>["ctx"];
  save: (s: Record<string, unknown>) => Promise<unknown>;
  t: T;
}) {
  const core = useT(coreMessages);
  const queryClient = useQueryClient();
  const upload = useMutation(BrandingSettingsService.method.uploadBrandingAsset);
  const [status, setStatus] = useState("");
  const [error, setError] = useState<{ kind: AssetKind; error: FormError }>();
  if (!resolved) return null;

  async function run(kind: AssetKind, action: () => Promise<unknown>, done: string) {
    setError(undefined);
    setStatus("");
    try {
      await action();
      await queryClient.invalidateQueries();
      setStatus(done);
    } catch (err) {
      setError({ kind, error: errorOf(err) });
    }
  }

  return (
    <section className="card" aria-labelledby="branding-assets">
      <h2 id="branding-assets">{t("assetsCard")}</h2>
      <p>{t("assetsIntro")}</p>
      {ASSETS.map((kind) => {
        const r = resolved[localName(kind)];
        const sha = String(r?.value ?? "");
        const name = t(localName(kind) as keyof (typeof messages)["en"]);
        const mine = error?.kind === kind ? error.error : undefined;
        return (
          <div key={kind}>
            <h3>{name}</h3>
            <p>
              <AssetView kind={kind} sha={sha} t={t} /> <span className="hint">— {originOf(t, level, r?.owner)}</span>
            </p>
            {canWrite && (
              <div className="toolbar">
                <Field
                  label={t("uploadAsset", { name })}
                  name="data"
                  type="file"
                  accept={kind === "font" ? ".woff2,.woff,.ttf,.otf,font/*" : "image/png,image/jpeg,image/gif"}
                  hint={kind === "font" ? t("fontHint") : kind.startsWith("icon") ? t("iconHint") : t("logoHint")}
                  error={mine}
                  disabled={upload.isPending}
                  onChange={async (e) => {
                    const input = e.currentTarget;
                    const file = input.files?.[0];
                    if (!file) return;
                    const data = new Uint8Array(await file.arrayBuffer());
                    await run(kind, () => upload.mutateAsync({ ctx, kind, data }), t("uploaded", { name }));
                    input.value = "";
                  }}
                />
                {sha && (
                  <ConfirmButton
                    label={t("removeAsset", { name })}
                    question={t("removeAssetQuestion", { name })}
                    onConfirm={() => run(kind, () => save({ [localName(kind)]: { value: { case: "set", value: "" } } }), core("saved"))}
                  />
                )}
                {!r?.owner && (
                  <ConfirmButton
                    label={t("resetProp", { name })}
                    question={t("resetQuestion", { name })}
                    className=""
                    onConfirm={() => run(kind, () => save(resetOf(kind)), t("resetDone"))}
                  />
                )}
              </div>
            )}
            {mine && <ErrorText error={mine} fields={["data"]} />}
          </div>
        );
      })}
      <Status text={status} />
    </section>
  );
}
