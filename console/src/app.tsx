import { useQuery } from "@connectrpc/connect-query";
import { Suspense, useEffect, useMemo, useState } from "react";
import { OrganizationService } from "../../gen/svc/resources/org/v3alpha/org_service_pb.js";
import { MembershipService } from "../../gen/svc/resources/membership/v3alpha/membership_service_pb.js";
import { BrandingSettingsService } from "../../gen/svc/settings/branding/v3alpha/branding_service_pb.js";
import { type Access, AccessContext, accessOf, OrgContext, orgCtx, useAccess, useOrg } from "./access";
import { errorOf } from "./api";
import { type Area, areas } from "./areas";
import { profile, signOut } from "./auth";
import { initialLanguage, type Language, LanguageContext, languageNames, languages, rememberLanguage, useT } from "./i18n";
import { messages } from "./i18n/core";
import { Home } from "./pages/home";
import { NoAccess } from "./pages/no-access";
import { navigate, useLocation } from "./router";
import { applyTheme, currentTheme, type Theme } from "./theme";
import { ErrorText, Link } from "./ui";

const ORG_KEY = "console.org";

function visible(area: Area, access: Access, orgId: string): boolean {
  if (area.where === "system") return access.inSystem(area.permission);
  if (area.where === "instance") return access.everywhere(area.permission);
  return access.inOrg(area.permission, orgId);
}

export function App() {
  const [lang, setLang] = useState<Language>(initialLanguage);
  const mine = useQuery(MembershipService.method.listMyMemberships, {});
  const access = useMemo(() => accessOf(mine.data?.result ?? []), [mine.data]);
  const instanceDefault = useQuery(OrganizationService.method.getInstanceDefault, {}, { enabled: access.everywhere("org.read") });
  const [chosenOrg, setChosenOrg] = useState(() => localStorage.getItem(ORG_KEY) ?? "");
  // an organisation the user may act in: the one chosen before, else the instance's default, else their own
  const orgId =
    chosenOrg && (access.everywhere("org.read") || access.orgIds.includes(chosenOrg))
      ? chosenOrg
      : (instanceDefault.data?.organization?.details?.id ?? access.orgIds[0] ?? "");
  // once resolved, the organisation stays the one in use (making another the instance default does not move it)
  useEffect(() => {
    if (!chosenOrg && orgId) setChosenOrg(orgId);
  }, [chosenOrg, orgId]);
  const org = useMemo(
    () => ({
      orgId,
      setOrgId: (id: string) => {
        localStorage.setItem(ORG_KEY, id);
        setChosenOrg(id);
      },
    }),
    [orgId],
  );
  const branding = useQuery(BrandingSettingsService.method.resolveBranding, { ctx: orgId ? orgCtx(orgId) : undefined }, { enabled: mine.isSuccess });
  const themeMode = branding.data?.settings?.themeMode?.value ?? "auto";
  useEffect(() => {
    if (themeMode === "light" || themeMode === "dark") document.documentElement.dataset.theme = themeMode;
    else applyTheme();
  }, [themeMode]);

  useEffect(() => rememberLanguage(lang), [lang]);

  if (mine.isPending) return <Loading lang={lang} />;
  if (mine.isError) {
    return (
      <LanguageContext.Provider value={lang}>
        <main id="main" className="fatal">
          <ErrorText error={errorOf(mine.error)} />
        </main>
      </LanguageContext.Provider>
    );
  }
  return (
    <LanguageContext.Provider value={lang}>
      <AccessContext.Provider value={access}>
        <OrgContext.Provider value={org}>
          {access.any ? <Shell lang={lang} setLang={setLang} themeLocked={themeMode === "light" || themeMode === "dark"} /> : <NoAccess />}
        </OrgContext.Provider>
      </AccessContext.Provider>
    </LanguageContext.Provider>
  );
}

function Loading({ lang }: { lang: Language }) {
  return (
    <LanguageContext.Provider value={lang}>
      <LoadingText />
    </LanguageContext.Provider>
  );
}

function LoadingText() {
  const t = useT(messages);
  return (
    <p role="status" className="loading">
      {t("loading")}
    </p>
  );
}

function Shell({ lang, setLang, themeLocked }: { lang: Language; setLang: (l: Language) => void; themeLocked: boolean }) {
  const t = useT(messages);
  const { path } = useLocation();
  const access = useAccess();
  const { orgId } = useOrg();
  const shown = areas.filter((a) => visible(a, access, orgId));
  const segment = path.split("/")[1] ?? "";
  const area = areas.find((a) => a.segment === segment);
  const Component = area?.component;
  const [theme, setTheme] = useState<Theme>(currentTheme);
  const me = profile();
  return (
    <>
      <a className="skip" href="#main">
        {t("skipToContent")}
      </a>
      <header className="top">
        <Link to="/" className="brand">
          {t("consoleTitle")}
        </Link>
        <OrgSwitcher />
        <div className="top-tools">
          <label>
            <span className="visually-hidden">{t("language")}</span>
            <select value={lang} onChange={(e) => setLang(e.target.value as Language)} aria-label={t("language")}>
              {languages.map((l) => (
                <option key={l} value={l} lang={l}>
                  {languageNames[l]}
                </option>
              ))}
            </select>
          </label>
          {!themeLocked && (
            <select
              value={theme}
              aria-label={t("theme")}
              onChange={(e) => {
                const v = e.target.value as Theme;
                setTheme(v);
                applyTheme(v);
              }}
            >
              <option value="system">{t("themeSystem")}</option>
              <option value="light">{t("themeLight")}</option>
              <option value="dark">{t("themeDark")}</option>
            </select>
          )}
          <span className="who">{t("signedInAs", { name: me.name })}</span>
          <button type="button" onClick={() => void signOut()}>
            {t("signOut")}
          </button>
        </div>
      </header>
      <div className="layout">
        <nav aria-label={t("navigation")} className="side">
          <ul>
            <li>
              <Link to="/" className={segment === "" ? "current" : undefined}>
                {t("navHome")}
              </Link>
            </li>
            {shown.map((a) => (
              <li key={a.segment}>
                <Link to={`/${a.segment}`} className={a.segment === segment ? "current" : undefined}>
                  {t(a.label)}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main" tabIndex={-1}>
          <Suspense fallback={<LoadingText />}>
            {segment === "" ? (
              <Home areas={shown} />
            ) : Component && area && visible(area, access, orgId) ? (
              <Component key={`${segment}:${orgId}`} path={path.slice(segment.length + 1) || "/"} />
            ) : (
              <NotFound />
            )}
          </Suspense>
        </main>
      </div>
    </>
  );
}

function NotFound() {
  const t = useT(messages);
  return (
    <>
      <h1>{t("notFound")}</h1>
      <p>
        <Link to="/">{t("back")}</Link>
      </p>
    </>
  );
}

/** The organisation the console acts in: any of the instance's for instance-wide roles, else the user's own. */
function OrgSwitcher() {
  const t = useT(messages);
  const { orgId, setOrgId } = useOrg();
  // the organisations the user may read: all of the instance's, or their own
  const all = useQuery(OrganizationService.method.searchOrganizations, { query: { limit: 200, asc: true } });
  const options = (all.data?.result ?? []).map((o) => ({ id: o.details?.id ?? "", name: o.name }));
  if (options.length < 2) {
    const name = options[0]?.name;
    return name ? <span className="org-name">{name}</span> : null;
  }
  return (
    <label className="org-switch">
      <span>{t("organization")}</span>
      <select
        value={orgId}
        onChange={(e) => {
          setOrgId(e.target.value);
          navigate("/");
        }}
        aria-label={t("switchOrganization")}
      >
        {options.map((o) => (
          <option key={o.id} value={o.id}>
            {o.name}
          </option>
        ))}
      </select>
    </label>
  );
}
