// Export and import (PortabilityService, instance-wide): start an export of organisations (iam.export) or an import
// of a file (iam.import), and the jobs of the last 24 hours as the server keeps them, so that the page can be left
// and opened again while they run.
import { useAccess } from "../access";
import type { AreaProps } from "../areas";
import { useT } from "../i18n";
import { messages as core } from "../i18n/core";
import { messages } from "../i18n/portability";
import { Link, Page } from "../ui";
import { ExportForm } from "./portability/export";
import { ImportForm } from "./portability/import";
import { JobsSection } from "./portability/jobs";

export default function Portability({ path }: AreaProps) {
  const t = useT(messages);
  const c = useT(core);
  const access = useAccess();
  if (path !== "/") {
    return (
      <Page title={c("notFound")}>
        <p>
          <Link to="/portability">{t("backToPortability")}</Link>
        </p>
      </Page>
    );
  }
  return (
    <Page title={t("title")}>
      <p>{t("intro")}</p>
      {access.everywhere("iam.export") && <ExportForm />}
      {access.everywhere("iam.import") && <ImportForm />}
      <JobsSection />
    </Page>
  );
}
