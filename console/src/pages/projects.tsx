// Projects of the chosen organisation: the list and creation; a project's settings, roles, applications, grants to
// other organisations and user grants, each a tab (/projects/<id>/<tab>); an application's page under its project.
import type { AreaProps } from "../areas";
import { useT } from "../i18n";
import { messages as coreMessages } from "../i18n/core";
import { match } from "../router";
import { Link, Page } from "../ui";
import { AppPage } from "./projects/app";
import { Apps, CreateApp } from "./projects/apps";
import { Grants } from "./projects/grants";
import { ProjectList } from "./projects/list";
import { ProjectFrame, Settings } from "./projects/project";
import { Roles } from "./projects/roles";
import { UserGrants } from "./projects/user-grants";

export default function Projects({ path }: AreaProps) {
  const c = useT(coreMessages);
  if (path === "/") return <ProjectList />;
  let m = match("/:id", path);
  if (m)
    return (
      <ProjectFrame id={m.id!} tab="">
        {(p) => <Settings project={p} />}
      </ProjectFrame>
    );
  m = match("/:id/roles", path);
  if (m)
    return (
      <ProjectFrame id={m.id!} tab="roles">
        {(p) => <Roles project={p} />}
      </ProjectFrame>
    );
  m = match("/:id/apps", path);
  if (m)
    return (
      <ProjectFrame id={m.id!} tab="apps">
        {(p) => <Apps project={p} />}
      </ProjectFrame>
    );
  m = match("/:id/apps/new", path);
  if (m)
    return (
      <ProjectFrame id={m.id!} tab="apps">
        {(p) => <CreateApp project={p} />}
      </ProjectFrame>
    );
  m = match("/:id/apps/:appId", path);
  if (m) {
    const appId = m.appId!;
    return (
      <ProjectFrame id={m.id!} tab="apps" child>
        {(p) => <AppPage key={appId} project={p} id={appId} />}
      </ProjectFrame>
    );
  }
  m = match("/:id/grants", path);
  if (m)
    return (
      <ProjectFrame id={m.id!} tab="grants">
        {(p) => <Grants project={p} />}
      </ProjectFrame>
    );
  m = match("/:id/user-grants", path);
  if (m)
    return (
      <ProjectFrame id={m.id!} tab="user-grants">
        {(p) => <UserGrants project={p} />}
      </ProjectFrame>
    );
  return (
    <Page title={c("notFound")}>
      <p>
        <Link to="/projects">{c("back")}</Link>
      </p>
    </Page>
  );
}
