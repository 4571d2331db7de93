/**
 * Default role -> permission mapping. A permission held through an instance membership applies to the
 * instance and every organisation in it; through an organisation membership, to that organisation only;
 * through a system membership, everywhere.
 */
const read = (...areas: string[]) => areas.map((a) => `${a}.read`);
const all = (...areas: string[]) => areas.flatMap((a) => [`${a}.read`, `${a}.write`, `${a}.delete`]);

const instanceOwner = [
  ...all("iam", "iam.feature", "iam.policy", "iam.member", "org", "org.feature", "org.member", "policy"),
  ...all("user", "user.grant", "project", "project.role", "project.app", "project.member", "project.grant", "project.grant.member"),
  ...all("action.target", "action.execution", "idp", "iam.web_key"),
  ...all("notification.provider", "iam.user_schema"),
  "org.create",
  "execution.read",
  "events.read",
  "iam.export",
  "iam.import",
  "user.import",
  "session.read",
  "session.write",
  "session.delete",
  "session.link",
];

const orgOwner = [
  ...all("org", "org.feature", "org.member", "policy", "user", "user.grant", "project", "project.role", "project.app", "project.member"),
  ...all("project.grant", "project.grant.member", "idp"),
  "user.import",
  "session.read",
  "session.delete",
];

export const defaultRolePermissions: Record<string, string[]> = {
  SYSTEM_OWNER: [...all("system", "system.feature", "system.policy", "system.member", "system.instance"), ...instanceOwner],
  SYSTEM_OWNER_VIEWER: [...read("system", "system.feature", "system.policy", "system.instance"), ...instanceOwner.filter((p) => p.endsWith(".read"))],
  IAM_OWNER: instanceOwner,
  IAM_OWNER_VIEWER: instanceOwner.filter((p) => p.endsWith(".read")),
  // Token exchange for another user (src/oidc/grants/token-exchange.ts): "impersonation" on the user's organisation;
  // "admin.impersonation" too when the user is an administrator (holds any membership).
  IAM_ADMIN_IMPERSONATOR: ["admin.impersonation", "impersonation"],
  IAM_END_USER_IMPERSONATOR: ["impersonation"],
  ORG_OWNER: orgOwner,
  ORG_OWNER_VIEWER: orgOwner.filter((p) => p.endsWith(".read")),
  ORG_USER_MANAGER: [...all("user", "user.grant"), "org.read", "user.import"],
  ORG_ADMIN_IMPERSONATOR: ["admin.impersonation", "impersonation"],
  ORG_END_USER_IMPERSONATOR: ["impersonation"],
  // A custom login UI's machine user: creates sessions with checks and finishes authorization requests with them.
  IAM_LOGIN_CLIENT: ["session.read", "session.write", "session.delete", "session.link"],
  PROJECT_OWNER: all("project", "project.role", "project.app", "project.member", "project.grant", "project.grant.member"),
  // Members of a project grant (users of the granted organisation): the user grants of their organisation's users
  // on the granted project, within the grant's roles.
  PROJECT_GRANT_OWNER: ["project.grant.read", "project.grant.member.read", ...all("user.grant")],
  PROJECT_GRANT_OWNER_VIEWER: ["project.grant.read", "user.grant.read"],
};

/** The roles a membership may hold in a kind of context, by their prefix. */
export function availableRoles(contextType: "system" | "instance" | "org" | "project" | "project_grant", rolePermissions = defaultRolePermissions): string[] {
  const prefix = { system: "SYSTEM_", instance: "IAM_", org: "ORG_", project: "PROJECT_", project_grant: "PROJECT_GRANT_" }[contextType];
  return Object.keys(rolePermissions)
    .filter((r) => r.startsWith(prefix) && (contextType !== "project" || !r.startsWith("PROJECT_GRANT_")))
    .sort();
}
