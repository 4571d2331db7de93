// The settings of the chosen organisation, or (for instance-wide roles) of the instance: an index of the kinds,
// and one page per kind at /settings/<kind>. Each value shows where it comes from and may be reset to it.
import type { AreaProps } from "../areas";
import { useT } from "../i18n";
import { messages as coreMessages } from "../i18n/core";
import { messages } from "../i18n/settings";
import { match } from "../router";
import { Link, Page } from "../ui";
import { BrandingSettings } from "./settings/branding";
import { LevelPicker, useLevel } from "./settings/common";
import { FeatureSettings } from "./settings/features";
import { LanguageSettings } from "./settings/languages";
import { LoginSettings } from "./settings/login";
import { DomainSettings, SecuritySettings } from "./settings/simple";
import { TextSettings } from "./settings/texts";

const kinds = {
  login: LoginSettings,
  languages: LanguageSettings,
  texts: TextSettings,
  branding: BrandingSettings,
  security: SecuritySettings,
  domain: DomainSettings,
  features: FeatureSettings,
} as const;
type Kind = keyof typeof kinds;

export default function SettingsArea({ path }: AreaProps) {
  const { level } = useLevel();
  if (path === "/") return <Index />;
  const kind = match("/:kind", path)?.kind;
  const Component = kind && kind in kinds ? kinds[kind as Kind] : undefined;
  // a new level starts with fresh forms: no edit made for one level is saved to another
  return Component ? <Component key={level} /> : <Missing />;
}

function Index() {
  const t = useT(messages);
  const choice = useLevel();
  const entries: { kind: Kind; title: string; text: string }[] = [
    { kind: "login", title: t("loginTitle"), text: t("loginSummary") },
    { kind: "languages", title: t("languagesTitle"), text: t("languagesSummary") },
    { kind: "texts", title: t("textsTitle"), text: t("textsSummary") },
    { kind: "branding", title: t("brandingTitle"), text: t("brandingSummary") },
    { kind: "security", title: t("securityTitle"), text: t("securitySummary") },
    { kind: "domain", title: t("domainTitle"), text: t("domainSummary") },
    { kind: "features", title: t("featuresTitle"), text: t("featuresSummary") },
  ];
  return (
    <Page title={t("settingsTitle")}>
      <p>{t("settingsIntro")}</p>
      <LevelPicker choice={choice} />
      <ul className="tiles">
        {entries.map((e) => (
          <li key={e.kind}>
            <Link to={`/settings/${e.kind}${choice.search}`} className="tile">
              <strong>{e.title}</strong>
              <br />
              <span className="hint">{e.text}</span>
            </Link>
          </li>
        ))}
      </ul>
    </Page>
  );
}

function Missing() {
  const core = useT(coreMessages);
  return (
    <Page title={core("notFound")}>
      <p>
        <Link to="/settings">{core("back")}</Link>
      </p>
    </Page>
  );
}
