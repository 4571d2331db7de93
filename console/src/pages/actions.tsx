// Actions (ActionService, instance-wide): the targets the server calls and the executions that say when. "/" lists
// both; "/targets/<id>" is one target.
import type { AreaProps } from "../areas";
import { useT } from "../i18n";
import { messages } from "../i18n/actions";
import { messages as core } from "../i18n/core";
import { match } from "../router";
import { Link, Page } from "../ui";
import { ExecutionsSection } from "./actions/executions";
import { TargetPage, TargetsSection } from "./actions/targets";

export default function Actions({ path }: AreaProps) {
  const t = useT(messages);
  const c = useT(core);
  const target = match("/targets/:id", path);
  if (target) return <TargetPage id={target.id!} />;
  if (path !== "/") {
    return (
      <Page title={c("notFound")}>
        <p>
          <Link to="/actions">{t("backToActions")}</Link>
        </p>
      </Page>
    );
  }
  return (
    <Page title={t("title")}>
      <p>{t("intro")}</p>
      <TargetsSection />
      <ExecutionsSection />
    </Page>
  );
}
