// Organisations: the list (search by name, state, sorting, paging, creation) and one organisation's page (rename,
// state, instance default, switching to it, deletion and its domains).
import type { AreaProps } from "../areas";
import { useT } from "../i18n";
import { messages as coreMessages } from "../i18n/core";
import { match } from "../router";
import { Link, Page } from "../ui";
import { OrgList } from "./orgs/list";
import { OrgPage } from "./orgs/org";

export default function Orgs({ path }: AreaProps) {
  const c = useT(coreMessages);
  if (path === "/") return <OrgList />;
  const item = match("/:id", path);
  if (item) return <OrgPage key={item.id} id={item.id!} />;
  return (
    <Page title={c("notFound")}>
      <p>
        <Link to="/orgs">{c("back")}</Link>
      </p>
    </Page>
  );
}
