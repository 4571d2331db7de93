/** What a project and its roles are configured with: stored by their events, decided on by the commands. */

export interface ProjectConfig {
  name: string;
  projectRoleAssertion: boolean;
  projectRoleCheck: boolean;
}

export interface RoleConfig {
  key: string;
  displayName: string;
  group: string;
}
