// The console's sections: the first path segment picks one; each is its own chunk, loaded when first opened, and
// shown in the navigation when the user holds its permission (in the chosen organisation, or instance-wide).
import { type ComponentType, lazy } from "react";
import type { messages } from "./i18n/core";

export interface AreaProps {
  /** The path inside the area: "/" for its start, "/123" for an item. */
  path: string;
}

export interface Area {
  segment: string;
  label: keyof (typeof messages)["en"];
  /** The permission that shows it: "org" ones in the chosen organisation, "instance" ones instance-wide, "system" in the system. */
  permission: string;
  where: "org" | "instance" | "system";
  component: ComponentType<AreaProps>;
}

export const areas: Area[] = [
  { segment: "orgs", label: "navOrganizations", permission: "org.read", where: "org", component: lazy(() => import("./pages/orgs")) },
  { segment: "users", label: "navUsers", permission: "user.read", where: "org", component: lazy(() => import("./pages/users")) },
  { segment: "projects", label: "navProjects", permission: "project.read", where: "org", component: lazy(() => import("./pages/projects")) },
  { segment: "idps", label: "navIdps", permission: "idp.read", where: "org", component: lazy(() => import("./pages/idps")) },
  { segment: "settings", label: "navSettings", permission: "policy.read", where: "org", component: lazy(() => import("./pages/settings")) },
  { segment: "actions", label: "navActions", permission: "action.target.read", where: "instance", component: lazy(() => import("./pages/actions")) },
  {
    segment: "portability",
    label: "navPortability",
    permission: "iam.export",
    where: "instance",
    component: lazy(() => import("./pages/portability")),
  },
  { segment: "events", label: "navEvents", permission: "events.read", where: "instance", component: lazy(() => import("./pages/events")) },
  {
    segment: "notifications",
    label: "navNotifications",
    permission: "notification.provider.read",
    where: "instance",
    component: lazy(() => import("./pages/notifications")),
  },
  { segment: "instances", label: "navInstances", permission: "system.instance.read", where: "system", component: lazy(() => import("./pages/instances")) },
];
