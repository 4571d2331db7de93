import type { Area } from "../areas";
import { profile } from "../auth";
import { useT } from "../i18n";
import { messages } from "../i18n/core";
import { Link, Page } from "../ui";

export function Home({ areas }: { areas: Area[] }) {
  const t = useT(messages);
  return (
    <Page title={t("welcome", { name: profile().name })}>
      <p>{t("homeIntro")}</p>
      <ul className="tiles">
        {areas.map((a) => (
          <li key={a.segment}>
            <Link to={`/${a.segment}`} className="tile">
              {t(a.label)}
            </Link>
          </li>
        ))}
      </ul>
    </Page>
  );
}
