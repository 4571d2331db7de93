// The users section: /users (the chosen organisation's users), /users/create/human and /users/create/machine,
// /users/<id> (one user). The screens are in ./users/.
import type { AreaProps } from "../areas";
import { useT } from "../i18n";
import { messages as coreMessages } from "../i18n/core";
import { match } from "../router";
import { Link, Page } from "../ui";
import { CreateHuman, CreateMachine } from "./users/create";
import { UserDetail } from "./users/detail";
import { UserList } from "./users/list";

export default function Users({ path }: AreaProps) {
  if (path === "/") return <UserList />;
  if (path === "/create/human") return <CreateHuman />;
  if (path === "/create/machine") return <CreateMachine />;
  const item = match("/:id", path);
  if (item?.id) return <UserDetail key={item.id} id={item.id} />;
  return <NotFound />;
}

function NotFound() {
  const c = useT(coreMessages);
  return (
    <Page title={c("notFound")}>
      <p>
        <Link to="/users">{c("back")}</Link>
      </p>
    </Page>
  );
}
