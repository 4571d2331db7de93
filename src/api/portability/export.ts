import type { SecretBox } from "../../crypto/secrets.js";
import { camelSettings, type DataOrg, type ExportedIdp, type IdpListName, idpLists, wireName } from "../../domain/data-org.js";
import { kindOfType } from "../../domain/idps.js";
import type { OidcConfig, ApiConfig } from "../../command/applications.js";
import type { ReportProgress } from "../../domain/jobs.js";
import type { ExportQueries } from "../../query/export-data.js";

/** The organisation's own settings that travel, by kind, and their DataOrg field. */
export const exportedSettings = { lockout: "lockoutPolicy", password_complexity: "passwordComplexityPolicy", login: "loginPolicy" } as const;

export interface ExportOptions {
  orgIds: string[];
  excludedOrgIds: string[];
  withPasswords: boolean;
  withOtp: boolean;
  /** Throws DEADLINE_EXCEEDED once the call's time is up; checked between pages. */
  checkDeadline: () => void;
  /** Told the organisations' count, each one started and finished, and the users written (a job's progress). */
  progress?: ReportProgress;
}

const USER_PAGE = 500;

/**
 * The export `{"orgs": [DataOrg...]}` as JSON text in chunks: one organisation's parts at a time and its users
 * a page at a time, so that a large export is never one string in memory. Never a client secret, a key, a
 * PAT or a signing key: none of them is read into the output (machine users' and applications' secrets,
 * keys and tokens stay behind); password hashes and TOTP secrets only when asked for.
 */
export async function* exportChunks(q: ExportQueries, box: SecretBox, instanceId: string, o: ExportOptions): AsyncGenerator<string> {
  yield '{"orgs":[';
  let firstOrg = true;
  const report = o.progress ?? (() => {});
  const orgs = await q.orgs(instanceId, o.orgIds, o.excludedOrgIds);
  report({ total: orgs.length, done: 0 });
  for (const [index, org] of orgs.entries()) {
    o.checkDeadline();
    report({ done: index, orgName: org.name, phase: "human_users" });
    yield `${firstOrg ? "" : ","}{"orgId":${JSON.stringify(org.id)},"org":${JSON.stringify({ name: org.name })}`;
    firstOrg = false;
    const domains = (await q.domains(org.id)).map((d) => ({
      orgId: org.id,
      domainName: d.domain,
      isVerified: d.verified,
      isPrimary: d.isPrimary,
      ...(d.validationType ? { validationType: d.validationType === "dns" ? "DOMAIN_VALIDATION_TYPE_DNS" : "DOMAIN_VALIDATION_TYPE_HTTP" } : {}),
    }));
    yield `,"domains":${JSON.stringify(domains)}`;
    yield ',"humanUsers":[';
    let first = true;
    for (let after = ""; ; ) {
      o.checkDeadline();
      const page = await q.users(org.id, "human", after, USER_PAGE);
      if (!page.length) break;
      after = page[page.length - 1]!.id;
      const totps = o.withOtp ? new Map((await q.totps(page.map((u) => u.id))).map((t) => [t.userId, t.secret])) : new Map<string, string>();
      const items = page.map((u) => {
        const sealed = totps.get(u.id);
        const user = {
          userName: u.username,
          profile: {
            firstName: u.givenName ?? "",
            lastName: u.familyName ?? "",
            nickName: u.nickName ?? "",
            displayName: u.displayName,
            preferredLanguage: u.preferredLanguage ?? "",
          },
          email: { email: u.email ?? "", isEmailVerified: u.emailVerified },
          ...(u.phone ? { phone: { phone: u.phone, isPhoneVerified: u.phoneVerified } } : {}),
          ...(o.withPasswords && u.passwordHash ? { hashedPassword: { value: u.passwordHash } } : {}),
          passwordChangeRequired: u.passwordChangeRequired,
          ...(sealed ? { otpCode: box.open(sealed) } : {}),
          // "initial" is no state to import: it follows from having no password.
          ...(u.state === "inactive" || u.state === "locked" ? { state: wireName("userState", u.state) } : {}),
        };
        return JSON.stringify({ userId: u.id, user });
      });
      yield (first ? "" : ",") + items.join(",");
      first = false;
      report({ objects: page.length });
    }
    report({ phase: "machine_users" });
    yield "]";
    const machines: NonNullable<DataOrg["machineUsers"]> = [];
    for (let after = ""; ; ) {
      o.checkDeadline();
      const page = await q.users(org.id, "machine", after, USER_PAGE);
      if (!page.length) break;
      after = page[page.length - 1]!.id;
      for (const u of page) {
        machines.push({
          userId: u.id,
          user: {
            userName: u.username,
            name: u.displayName,
            description: u.description ?? "",
            accessTokenType: wireName("machineTokenType", u.accessTokenType),
          },
        });
      }
    }
    yield `,"machineUsers":${JSON.stringify(machines)}`;
    report({ objects: machines.length, phase: "projects" });
    o.checkDeadline();
    const projects = await q.projects(org.id);
    const projectIds = projects.map((p) => p.id);
    const projectGrants = await q.projectGrants(projectIds);
    const [roles, apps, grants, members, settings, links, idps, metadata] = await Promise.all([
      q.roles(projectIds),
      q.applications(org.id),
      q.userGrants(org.id),
      q.members(
        org.id,
        projectIds,
        projectGrants.map((g) => g.id),
      ),
      q.settings(org.id, Object.keys(exportedSettings)),
      q.userLinks(org.id),
      q.idps(org.id),
      q.userMetadata(org.id),
    ]);
    const rest: DataOrg = {
      projects: projects.map((p) => ({
        projectId: p.id,
        project: { name: p.name, projectRoleAssertion: p.projectRoleAssertion, projectRoleCheck: p.projectRoleCheck },
      })),
      projectRoles: roles.map((r) => ({ projectId: r.projectId, roleKey: r.key, displayName: r.displayName, group: r.group })),
      oidcApps: apps.filter((a) => a.kind === "oidc").map((a) => ({ appId: a.id, app: oidcAppShape(a.projectId, a.name, a.clientId, a.config as OidcConfig) })),
      apiApps: apps
        .filter((a) => a.kind === "api")
        .map((a) => ({
          appId: a.id,
          app: { projectId: a.projectId, name: a.name, clientId: a.clientId, authMethodType: wireName("apiAuthMethod", (a.config as ApiConfig).authMethod) },
        })),
      userGrants: grants.map((g) => ({ userGrantId: g.id, userId: g.userId, projectId: g.projectId, roleKeys: g.roleKeys })),
      orgMembers: members.filter((m) => m.contextType === "org").map((m) => ({ userId: m.userId, roles: m.roles })),
      projectMembers: members.filter((m) => m.contextType === "project").map((m) => ({ projectId: m.contextId, userId: m.userId, roles: m.roles })),
      projectGrants: projectGrants.map((g) => ({
        grantId: g.id,
        projectGrant: { projectId: g.projectId, grantedOrgId: g.grantedOrgId, roleKeys: g.roleKeys },
      })),
      projectGrantMembers: members
        .filter((m) => m.contextType === "project_grant")
        .map((m) => ({ projectId: projectGrants.find((g) => g.id === m.contextId)?.projectId ?? "", grantId: m.contextId, userId: m.userId, roles: m.roles })),
      ...exportedIdps(idps),
      userLinks: links.map((l) => ({ userId: l.userId, idpId: l.idpId, providedUserId: l.externalUserId, providedUserName: l.displayName })),
      userMetadata: metadata.map((m) => ({ id: m.userId, key: m.key, value: Buffer.from(m.value).toString("base64") })),
    };
    for (const s of settings) {
      rest[exportedSettings[s.kind as keyof typeof exportedSettings]] = camelSettings(s.values as Record<string, unknown>);
    }
    yield `,${JSON.stringify(rest).slice(1, -1)}}`;
  }
  report({ done: orgs.length, orgName: "", phase: "" });
  yield "]}";
}

function oidcAppShape(projectId: string, name: string, clientId: string, c: OidcConfig) {
  return {
    projectId,
    name,
    clientId,
    redirectUris: c.redirectUris,
    responseTypes: c.responseTypes.map((t) => wireName("responseType", t)),
    grantTypes: c.grantTypes.map((t) => wireName("grantType", t)),
    appType: wireName("appType", c.appType),
    authMethodType: wireName("oidcAuthMethod", c.authMethod),
    postLogoutRedirectUris: c.postLogoutRedirectUris,
    devMode: c.devMode,
    accessTokenType: wireName("oidcTokenType", c.accessTokenType),
    accessTokenRoleAssertion: c.accessTokenRoleAssertion,
    idTokenRoleAssertion: c.idTokenRoleAssertion,
    idTokenUserinfoAssertion: c.idTokenUserinfoAssertion,
    clockSkew: `${c.clockSkewMs / 1000}s`,
  };
}

/** The organisation's providers, a list per kind (`gitlabIdps` always, the others when it has some); no secrets. */
function exportedIdps(idps: Awaited<ReturnType<ExportQueries["idps"]>>): Partial<Record<IdpListName, ExportedIdp[]>> {
  const lists: Partial<Record<IdpListName, ExportedIdp[]>> = { gitlabIdps: [] };
  for (const i of idps) {
    const kind = kindOfType(i.type);
    if (!kind) continue;
    const entry = { idpId: i.id, idp: { name: i.name, ...(i.config as object), options: i.options as object, ownerPolicy: i.ownerPolicy } };
    lists[idpLists[kind]] = [...(lists[idpLists[kind]] ?? []), entry];
  }
  return lists;
}
