// Instances of the system (InstanceService, system members only): search, create with the first organisation and
// administrator, rename, domains, limits (blocking and audit log retention), delete. The service names the
// instance by instance_id in each request: no ctx.
import type { AreaProps } from "../areas";
import { match } from "../router";
import { CreateInstance } from "./instances/create";
import { InstanceItem } from "./instances/item";
import { InstanceList } from "./instances/list";

export default function Instances({ path }: AreaProps) {
  if (path === "/") return <InstanceList />;
  if (path === "/new") return <CreateInstance />;
  const m = match("/:id", path);
  if (m) return <InstanceItem id={m.id!} />;
  return <InstanceList />;
}
