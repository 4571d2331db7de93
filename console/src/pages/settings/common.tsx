// What every settings page shares: the context the page acts in (the chosen organisation, the instance, the
// system), where a value comes from, its last change, and resetting a value to the inherited one (properties.tsx
// has the form of properties).
import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { useQuery } from "@connectrpc/connect-query";
import type { ReactNode } from "react";
import { type Owner, OwnerType, type RequestContext, RequestContextSchema } from "../../../../gen/svc/object/v3alpha/object_pb.js";
import { OrganizationService } from "../../../../gen/svc/resources/org/v3alpha/org_service_pb.js";
import type { Details } from "../../../../gen/svc/settings/object/v3alpha/object_pb.js";
import { orgCtx, useAccess, useOrg } from "../../access";
import { formatDate, useLanguage, useT } from "../../i18n";
import { messages } from "../../i18n/settings";
import { navigate, useLocation } from "../../router";
import { ConfirmButton, Link, Page, Select } from "../../ui";

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
        <Select
          markInvalid
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

/** A colour as #rrggbb. */
export const HEX = /^#[0-9a-f]{6}$/;

/** A colour sample next to its value (the value is the information; the sample only shows it). */
export function Swatch({ color }: { color: string }) {
  if (!HEX.test(color)) return <code>{color}</code>;
  return (
    <span>
      <span aria-hidden="true" className="swatch" style={{ backgroundColor: color }} />
      <code>{color}</code>
    </span>
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
