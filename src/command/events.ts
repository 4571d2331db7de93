/**
 * Every event type the server writes, `<aggregate>.<noun>.<verb>`. docs/events.md lists them with their
 * payloads; event executions are checked against this list.
 */
export const EventTypes = {
  instanceAdded: "instance.instance.added",
  instanceDomainAdded: "instance.domain.added",
  instanceDefaultOrgSet: "instance.default_org.set",
  instanceMemberAdded: "instance.member.added",
  systemMemberAdded: "system.member.added",
  orgAdded: "org.org.added",
  orgMemberAdded: "org.member.added",
  orgChanged: "org.org.changed",
  orgDeactivated: "org.org.deactivated",
  orgReactivated: "org.org.reactivated",
  orgRemoved: "org.org.removed",
  humanAdded: "user.human.added",
  humanChanged: "user.human.changed",
  machineAdded: "user.machine.added",
  machineChanged: "user.machine.changed",
  userLocked: "user.user.locked",
  userUnlocked: "user.user.unlocked",
  userDeactivated: "user.user.deactivated",
  userReactivated: "user.user.reactivated",
  userRemoved: "user.user.removed",
  passwordChanged: "user.password.changed",
  passwordCheckSucceeded: "user.password.check_succeeded",
  passwordCheckFailed: "user.password.check_failed",
  secretSet: "user.secret.set",
  secretRemoved: "user.secret.removed",
  keyAdded: "user.key.added",
  keyRemoved: "user.key.removed",
  patAdded: "user.pat.added",
  patRemoved: "user.pat.removed",
  sessionAdded: "session.session.added",
  sessionReauthenticated: "session.session.reauthenticated",
  sessionTerminated: "session.session.terminated",
  featureSet: "settings.feature.set",
  languageSet: "settings.language.set",
  passwordComplexitySet: "settings.password_complexity.set",
  lockoutSet: "settings.lockout.set",
  loginSettingsSet: "settings.login.set",
  targetAdded: "action.target.added",
  targetChanged: "action.target.changed",
  targetRemoved: "action.target.removed",
  executionSet: "action.execution.set",
  executionRemoved: "action.execution.removed",
  gitlabIdpAdded: "idp.gitlab.added",
  gitlabIdpChanged: "idp.gitlab.changed",
  idpStatePolicySet: "idp.state_policy.set",
  idpRemoved: "idp.idp.removed",
} as const;

/** Every event type, sorted: event executions are checked against it. */
export const allEventTypes: string[] = Object.values(EventTypes).sort();

export type ContextType = "system" | "instance" | "org";

/** Aggregate IDs of settings: one aggregate per kind and owning context. */
export function settingsAggregateId(kind: string, ownerType: ContextType, ownerId: string): string {
  return `${kind}/${ownerType}/${ownerId}`;
}
