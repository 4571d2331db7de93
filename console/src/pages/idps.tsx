// Identity providers as the chosen organisation sees them (IdentityProviderService): its own, and those of the
// instance and the system with this organisation's state policy. /idps the list, /idps/new the kind picker,
// /idps/new/<kind> the form of a kind, /idps/<id> one provider.
import type { AreaProps } from "../areas";
import { match } from "../router";
import { CreateIdp, KindPicker } from "./idps/create";
import { IdpItem } from "./idps/item";
import { IdpList } from "./idps/list";

export default function Idps({ path }: AreaProps) {
  if (path === "/new") return <KindPicker />;
  const kind = match("/new/:kind", path);
  if (kind) return <CreateIdp kindId={kind.kind!} />;
  const item = match("/:id", path);
  if (item && path !== "/") return <IdpItem id={item.id!} />;
  return <IdpList />;
}
