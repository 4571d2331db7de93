import { Code } from "@connectrpc/connect";
import { fromWire, parseGoDuration, type ApiAppShape, type OidcAppShape } from "../../domain/data-org.js";
import { errors } from "../../errors/errors.js";
import { createApplication, type AppConfig, type OidcConfig } from "../applications.js";
import { addRole, createProject } from "../projects.js";
import { alreadyThere, isCode, projectInOrg, type OrgImport } from "./context.js";

/** Projects, with their IDs. */
export async function importProjects(o: OrgImport): Promise<void> {
  for (const [i, entry] of (o.data.projects ?? []).entries()) {
    const projectId = entry.projectId ?? "";
    await o.each("project", projectId, async () => {
      if (!projectId) throw errors.invalidArgument("IMPORT-p1d0", `invalid projects[${i}].project_id: is required`);
      if (!(await alreadyThere(o.deps.db, "project", projectId, o.req.instanceId))) {
        const p = entry.project ?? {};
        if (!p.name?.trim()) throw errors.invalidArgument("IMPORT-pn4m", `invalid projects[${i}].project.name: is required`);
        const config = { name: p.name.trim(), projectRoleAssertion: !!p.projectRoleAssertion, projectRoleCheck: !!p.projectRoleCheck };
        await createProject(o.deps.es, { ...o.base, orgId: o.orgId, id: projectId, config });
      }
      o.ok.projectIds.push(projectId);
    });
  }
}

/** Roles of the organisation's projects; a role already there counts as done. */
export async function importProjectRoles(o: OrgImport): Promise<void> {
  for (const [i, r] of (o.data.projectRoles ?? []).entries()) {
    const id = `${r.projectId ?? ""}:${r.roleKey ?? ""}`;
    await o.each("project_role", id, async () => {
      if (!r.projectId || !r.roleKey) throw errors.invalidArgument("IMPORT-r0l3", `invalid project_roles[${i}]: project_id and role_key are required`);
      await projectInOrg(o.deps.db, r.projectId, o.orgId, `project_roles[${i}].project_id`);
      try {
        await addRole(o.deps.es, { ...o.base, id: r.projectId, role: { key: r.roleKey, displayName: r.displayName ?? r.roleKey, group: r.group ?? "" } });
      } catch (err) {
        if (!isCode(err, Code.AlreadyExists)) throw err;
      }
      o.ok.projectRoles.push(id);
    });
  }
}

/** OIDC and API applications, with their IDs (and so their client IDs), without secrets or keys. */
export async function importApplications(o: OrgImport): Promise<void> {
  for (const [kind, list] of [
    ["oidc", o.data.oidcApps ?? []],
    ["api", o.data.apiApps ?? []],
  ] as const) {
    for (const [i, entry] of list.entries()) {
      const appId = entry.appId ?? "";
      const field = `${kind}_apps[${i}]`;
      await o.each(`${kind}_app`, appId, async () => {
        if (!appId) throw errors.invalidArgument("IMPORT-a1d0", `invalid ${field}.app_id: is required`);
        if (!(await alreadyThere(o.deps.db, "application", appId, o.req.instanceId))) {
          const app = entry.app ?? {};
          if (!app.name?.trim()) throw errors.invalidArgument("IMPORT-an4m", `invalid ${field}.app.name: is required`);
          await projectInOrg(o.deps.db, app.projectId ?? "", o.orgId, `${field}.app.project_id`);
          const config: AppConfig =
            kind === "oidc"
              ? { kind, oidc: oidcConfigOf(app as OidcAppShape, `${field}.app`) }
              : { kind, api: apiConfigOf(app as ApiAppShape, `${field}.app`) };
          await createApplication(o.deps.es, { ...o.base, id: appId, projectId: app.projectId!, name: app.name.trim(), config });
        }
        (kind === "oidc" ? o.ok.oidcAppIds : o.ok.apiAppIds).push(appId);
      });
    }
  }
}

function wireList<K extends "responseType" | "grantType">(kind: K, values: string[] | undefined, field: string) {
  return (values ?? []).map((v, i) => {
    const ours = fromWire(kind, v);
    if (!ours) throw errors.invalidArgument("IMPORT-3num", `invalid ${field}[${i}]: unknown value "${String(v).slice(0, 60)}"`);
    return ours;
  });
}

function one<K extends "appType" | "oidcAuthMethod" | "oidcTokenType" | "apiAuthMethod">(kind: K, value: string | undefined, fallback: string, field: string) {
  const ours = fromWire(kind, value || fallback);
  if (!ours) throw errors.invalidArgument("IMPORT-3nu1", `invalid ${field}: unknown value "${String(value).slice(0, 60)}"`);
  return ours;
}

function oidcConfigOf(a: OidcAppShape, field: string): OidcConfig {
  const skew = a.clockSkew ? parseGoDuration(a.clockSkew) : 0;
  if (skew === undefined) throw errors.invalidArgument("IMPORT-sk3w", `invalid ${field}.clock_skew: must be a duration such as "1s"`);
  return {
    redirectUris: a.redirectUris ?? [],
    responseTypes: wireList("responseType", a.responseTypes ?? ["OIDC_RESPONSE_TYPE_CODE"], `${field}.response_types`) as OidcConfig["responseTypes"],
    grantTypes: wireList("grantType", a.grantTypes ?? ["OIDC_GRANT_TYPE_AUTHORIZATION_CODE"], `${field}.grant_types`) as OidcConfig["grantTypes"],
    appType: one("appType", a.appType, "OIDC_APP_TYPE_WEB", `${field}.app_type`) as OidcConfig["appType"],
    authMethod: one("oidcAuthMethod", a.authMethodType, "OIDC_AUTH_METHOD_TYPE_BASIC", `${field}.auth_method_type`) as OidcConfig["authMethod"],
    postLogoutRedirectUris: a.postLogoutRedirectUris ?? [],
    accessTokenType: one("oidcTokenType", a.accessTokenType, "OIDC_TOKEN_TYPE_BEARER", `${field}.access_token_type`) as OidcConfig["accessTokenType"],
    idTokenUserinfoAssertion: !!a.idTokenUserinfoAssertion,
    accessTokenRoleAssertion: !!a.accessTokenRoleAssertion,
    idTokenRoleAssertion: !!a.idTokenRoleAssertion,
    devMode: !!a.devMode,
    clockSkewMs: skew,
  };
}

function apiConfigOf(a: ApiAppShape, field: string) {
  return {
    authMethod: one("apiAuthMethod", a.authMethodType, "API_AUTH_METHOD_TYPE_BASIC", `${field}.auth_method_type`) as "client_secret_basic" | "private_key_jwt",
  };
}
