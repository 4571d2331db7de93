import { Code, ConnectError } from "@connectrpc/connect";
import type { SecretBox } from "../crypto/secrets.js";
import {
  fromWire,
  parseGoDuration,
  snakeKeys,
  TimedOut,
  type DataOrg,
  type ImportError,
  type ImportSuccessOrg,
  type OidcAppShape,
  type ApiAppShape,
} from "../domain/data-org.js";
import { changeOf } from "../domain/settings.js";
import { propertiesOf, type SettingsKind } from "../domain/settings-kinds.js";
import { errors } from "../errors/errors.js";
import type { EventStore } from "../eventstore/eventstore.js";
import type { SettingsQueries } from "../query/settings.js";
import { passwordRules } from "../query/password-rules.js";
import type { Database } from "../storage/database.js";
import { createApplication, type AppConfig, type OidcConfig } from "./applications.js";
import { importableHuman, importedPasswordHash, importHumans, needsInitialisation, type HumanToImport } from "./import-human.js";
import { idpLinkEvents } from "./idp-links.js";
import { createGitlabIdp } from "./idps.js";
import { addMembership } from "./memberships.js";
import { createOrg } from "./orgs.js";
import { addRole, createProject } from "./projects.js";
import { changeSettings } from "./settings.js";
import { requestInitialPassword } from "./user-codes.js";
import { createUserGrant } from "./user-grants.js";
import { createMachine } from "./users.js";

/**
 * The data import (contract, anchor-notes §4.1): organisations with their IDs, then in the anchor's order
 * their settings, humans, machines, projects, roles, applications, user grants and members. Each object is
 * written by the ordinary command (or its events) in a transaction of its own, with the creator
 * `import:<caller>`, so an object is there whole or not at all; one that fails is reported in `errors` and the
 * rest goes on. An object whose ID is already there is left alone and counted as done: the same import twice
 * creates nothing twice, and an import cut short by its timeout completes when run again.
 */
export interface ImportDeps {
  es: EventStore;
  db: Database;
  box: SecretBox;
  settings: SettingsQueries;
}

export interface ImportRequest {
  instanceId: string;
  /** The instance's domain, for the primary domains of new organisations. */
  instanceDomain: string;
  creator: string;
  orgs: DataOrg[];
  deadline: number;
}

export interface ImportResult {
  errors: ImportError[];
  success: { orgs: ImportSuccessOrg[] };
}

/** The timeout ran out, with what was done so far (the API answers DEADLINE_EXCEEDED with it). */
export class ImportDeadline extends TimedOut {
  constructor(readonly result: ImportResult) {
    super("the import's timeout ran out; what is reported was completed, run the same import again for the rest", [
      { "@type": "type.googleapis.com/svc.admin.v1.ImportDataResponse", ...result },
    ]);
  }
}

const settingsOf: [SettingsKind, "lockoutPolicy" | "passwordComplexityPolicy" | "loginPolicy", string][] = [
  ["lockout", "lockoutPolicy", "lockout_policy"],
  ["password_complexity", "passwordComplexityPolicy", "password_complexity_policy"],
  ["login", "loginPolicy", "login_policy"],
];

/** Humans written per transaction. */
const HUMAN_BATCH = 200;

const isCode = (err: unknown, code: Code) => err instanceof ConnectError && err.code === code;
const messageOf = (err: unknown) => (err instanceof ConnectError ? err.rawMessage : "internal error");

/** The milliseconds a `timeout` string allows; INVALID_ARGUMENT when it is no duration (default 30 minutes when empty). */
export function timeoutOf(timeout: unknown, field = "timeout"): number {
  if (timeout === undefined || timeout === null || timeout === "") return 30 * 60_000;
  const ms = typeof timeout === "string" ? parseGoDuration(timeout.trim()) : undefined;
  if (ms === undefined || ms <= 0 || ms > 24 * 3_600_000) {
    throw errors.invalidArgument("IMPORT-t1m3", `invalid ${field}: must be a duration such as "30m", "90s" or "1h30m" (more than 0, at most 24h)`);
  }
  return ms;
}

export async function importData(deps: ImportDeps, req: ImportRequest): Promise<ImportResult> {
  const result: ImportResult = { errors: [], success: { orgs: [] } };
  const check = () => {
    if (Date.now() >= req.deadline) throw new ImportDeadline(result);
  };
  for (const [i, data] of req.orgs.entries()) {
    check();
    await importOrg(deps, req, data, i, result, check);
  }
  return result;
}

async function importOrg(deps: ImportDeps, req: ImportRequest, data: DataOrg, index: number, result: ImportResult, check: () => void) {
  const { es, db } = deps;
  const base = { instanceId: req.instanceId, creator: req.creator };
  const orgId = data.orgId ?? "";
  const fail = (type: string, id: string, err: unknown) => {
    if (err instanceof ImportDeadline) throw err;
    // A fault of the server is not the entry's fault: it stops the import (and is logged as such).
    if (!(err instanceof ConnectError) || err.code === Code.Internal) throw err;
    result.errors.push({ type, id, message: messageOf(err) });
  };
  /** Runs one object's import; its failure is reported under `type` and `id`. */
  const each = async (type: string, id: string, run: () => Promise<void>) => {
    check();
    try {
      await run();
    } catch (err) {
      fail(type, id, err);
    }
  };

  if (!orgId) {
    result.errors.push({ type: "org", id: "", message: `invalid data_orgs.orgs[${index}].org_id: is required` });
    return;
  }
  let orgReady = false;
  await each("org", orgId, async () => {
    const existing = await db.prisma.org.findUnique({ where: { id: orgId } });
    if (existing && existing.instanceId !== req.instanceId)
      throw errors.alreadyExists("IMPORT-0rgx", `the organization ID "${orgId}" is used in another instance`);
    if (!existing) {
      const name = data.org?.name?.trim();
      if (!name) throw errors.invalidArgument("IMPORT-0rgn", `invalid data_orgs.orgs[${index}].org.name: is required`);
      await createOrg(es, { ...base, id: orgId, name, domain: req.instanceDomain });
    }
    orgReady = true;
  });
  // Without its organisation nothing of it can be placed.
  if (!orgReady) return;
  const ok: ImportSuccessOrg = {
    orgId,
    humanUserIds: [],
    machineUserIds: [],
    projectIds: [],
    projectRoles: [],
    oidcAppIds: [],
    apiAppIds: [],
    userGrants: [],
    orgMembers: [],
    projectMembers: [],
    userLinks: [],
    gitlabIdps: [],
    domains: [],
  };
  result.success.orgs.push(ok);
  const org = await db.prisma.org.findUniqueOrThrow({ where: { id: orgId } });
  ok.domains.push(org.primaryDomain);

  for (const [kind, key, field] of settingsOf) {
    const values = data[key];
    if (!values || typeof values !== "object") continue;
    await each(field, orgId, async () => {
      const stored = snakeKeys(values);
      const known = propertiesOf(kind);
      const unknown = Object.keys(stored).filter((k) => !known[k] || known[k]!.fixed);
      if (unknown.length) throw errors.invalidArgument("IMPORT-s3t0", `invalid ${field}: unknown properties ${unknown.join(", ")}`);
      const change = changeOf(kind, Object.fromEntries(Object.entries(stored).map(([k, v]) => [k, { set: v }])), (p) => `${field}.${p}`);
      await changeSettings(es, { kind, instanceId: req.instanceId, owner: { type: "org", id: orgId }, creator: req.creator, change });
    });
  }

  for (const [i, entry] of (data.gitlabIdps ?? []).entries()) {
    const idpId = entry.idpId ?? "";
    await each("gitlab_idp", idpId, async () => {
      if (!idpId) throw errors.invalidArgument("IMPORT-1dp1", `invalid gitlab_idps[${i}].idp_id: is required`);
      const there = await db.prisma.idp.findUnique({ where: { id: idpId }, select: { instanceId: true } });
      if (there && there.instanceId !== req.instanceId) throw errors.alreadyExists("IMPORT-1dp2", `the identity provider ID "${idpId}" is used elsewhere`);
      if (!there) {
        const c = entry.idp ?? {};
        if (!c.name?.trim() || !c.clientId?.trim())
          throw errors.invalidArgument("IMPORT-1dp3", `invalid gitlab_idps[${i}].idp: name and client_id are required`);
        const ownerPolicy = c.ownerPolicy === "deactivate" ? "deactivate" : "activate";
        // Without its client secret, which does not travel: set it on the target before the provider is used.
        await createGitlabIdp(es, deps.box, {
          id: idpId,
          owner: { type: "org", id: orgId, instanceId: req.instanceId },
          creator: req.creator,
          config: { name: c.name.trim(), clientId: c.clientId.trim(), scopes: c.scopes ?? [], options: c.options ?? {} },
          ownerPolicy,
        });
      }
      ok.gitlabIdps.push(idpId);
    });
  }

  const rules = await passwordRules(deps.settings, req.instanceId, orgId);
  const humans = data.humanUsers ?? [];
  for (let start = 0; start < humans.length; start += HUMAN_BATCH) {
    check();
    // Checked one by one; the good ones written together (importHumans).
    const batch: HumanToImport[] = [];
    for (const [n, entry] of humans.slice(start, start + HUMAN_BATCH).entries()) {
      const i = start + n;
      const userId = entry.userId ?? "";
      await each("human_user", userId, async () => {
        if (!userId) throw errors.invalidArgument("IMPORT-u1d0", `invalid human_users[${i}].user_id: is required`);
        const human = importableHuman(entry.user ?? {}, `human_users[${i}].user.`);
        batch.push({ userId, human, passwordHash: await importedPasswordHash(human, rules.problem, `human_users[${i}].user.password`) });
      });
    }
    const outcomes = await importHumans(es, deps.box, { ...base, orgId }, batch);
    for (const [n, item] of batch.entries()) {
      const outcome = outcomes[n]!;
      if (outcome.error) {
        fail("human_user", item.userId, outcome.error);
        continue;
      }
      // Once: only for the user this import created.
      if (outcome.created && needsInitialisation(item.human, item.passwordHash)) {
        await each("human_user_mail", item.userId, () =>
          requestInitialPassword(es, deps.box, { instanceId: req.instanceId, userId: item.userId, creator: req.creator }).then(() => {}),
        );
      }
      ok.humanUserIds.push(item.userId);
    }
  }

  for (const [i, l] of (data.userLinks ?? []).entries()) {
    await each("user_link", `${l.idpId ?? ""}:${l.providedUserId ?? ""}`, async () => {
      if (!l.userId || !l.idpId || !l.providedUserId) {
        throw errors.invalidArgument("IMPORT-l1nk", `invalid user_links[${i}]: user_id, idp_id and provided_user_id are required`);
      }
      const link = { idpId: l.idpId, externalUserId: l.providedUserId, displayName: l.providedUserName ?? "" };
      await es.execute(async (w) => {
        await w.lock(req.instanceId, "user", l.userId!);
        const user = await w.tx.user.findFirst({ where: { id: l.userId, orgId }, select: { id: true } });
        if (!user) throw errors.notFound("IMPORT-l1nu", `user_links[${i}].user_id: user "${l.userId}" not found in organization "${orgId}"`);
        await w.push(
          req.instanceId,
          req.creator,
          await idpLinkEvents(w.tx, { instanceId: req.instanceId, userId: user.id, orgId, links: [link], fieldOf: () => `user_links[${i}]` }),
        );
      });
      ok.userLinks.push({ userId: l.userId, idpId: l.idpId, externalUserId: l.providedUserId });
    });
  }

  for (const [i, entry] of (data.machineUsers ?? []).entries()) {
    const userId = entry.userId ?? "";
    await each("machine_user", userId, async () => {
      if (!userId) throw errors.invalidArgument("IMPORT-u1d1", `invalid machine_users[${i}].user_id: is required`);
      if (!(await alreadyThere(db, "user", userId, req.instanceId))) {
        const u = entry.user ?? {};
        const username = u.userName?.trim();
        if (!username) throw errors.invalidArgument("IMPORT-m4ch", `invalid machine_users[${i}].user.user_name: is required`);
        const accessTokenType = fromWire("machineTokenType", u.accessTokenType || "ACCESS_TOKEN_TYPE_BEARER");
        if (!accessTokenType) throw errors.invalidArgument("IMPORT-m4tt", `invalid machine_users[${i}].user.access_token_type: unknown`);
        await createMachine(es, {
          ...base,
          orgId,
          id: userId,
          machine: { username, name: u.name || username, description: u.description ?? "", accessTokenType },
        });
      }
      ok.machineUserIds.push(userId);
    });
  }

  for (const [i, entry] of (data.projects ?? []).entries()) {
    const projectId = entry.projectId ?? "";
    await each("project", projectId, async () => {
      if (!projectId) throw errors.invalidArgument("IMPORT-p1d0", `invalid projects[${i}].project_id: is required`);
      if (!(await alreadyThere(db, "project", projectId, req.instanceId))) {
        const p = entry.project ?? {};
        if (!p.name?.trim()) throw errors.invalidArgument("IMPORT-pn4m", `invalid projects[${i}].project.name: is required`);
        const config = { name: p.name.trim(), projectRoleAssertion: !!p.projectRoleAssertion, projectRoleCheck: !!p.projectRoleCheck };
        await createProject(es, { ...base, orgId, id: projectId, config });
      }
      ok.projectIds.push(projectId);
    });
  }

  for (const [i, r] of (data.projectRoles ?? []).entries()) {
    const id = `${r.projectId ?? ""}:${r.roleKey ?? ""}`;
    await each("project_role", id, async () => {
      if (!r.projectId || !r.roleKey) throw errors.invalidArgument("IMPORT-r0l3", `invalid project_roles[${i}]: project_id and role_key are required`);
      await inOrg(db, "project", r.projectId, orgId, `project_roles[${i}].project_id`);
      try {
        await addRole(es, { ...base, id: r.projectId, role: { key: r.roleKey, displayName: r.displayName ?? r.roleKey, group: r.group ?? "" } });
      } catch (err) {
        if (!isCode(err, Code.AlreadyExists)) throw err;
      }
      ok.projectRoles.push(id);
    });
  }

  for (const [kind, list] of [
    ["oidc", data.oidcApps ?? []],
    ["api", data.apiApps ?? []],
  ] as const) {
    for (const [i, entry] of list.entries()) {
      const appId = entry.appId ?? "";
      const field = `${kind}_apps[${i}]`;
      await each(`${kind}_app`, appId, async () => {
        if (!appId) throw errors.invalidArgument("IMPORT-a1d0", `invalid ${field}.app_id: is required`);
        if (!(await alreadyThere(db, "application", appId, req.instanceId))) {
          const app = entry.app ?? {};
          if (!app.name?.trim()) throw errors.invalidArgument("IMPORT-an4m", `invalid ${field}.app.name: is required`);
          await inOrg(db, "project", app.projectId ?? "", orgId, `${field}.app.project_id`);
          const config: AppConfig =
            kind === "oidc"
              ? { kind, oidc: oidcConfigOf(app as OidcAppShape, `${field}.app`) }
              : { kind, api: apiConfigOf(app as ApiAppShape, `${field}.app`) };
          await createApplication(es, { ...base, id: appId, projectId: app.projectId!, name: app.name.trim(), config });
        }
        (kind === "oidc" ? ok.oidcAppIds : ok.apiAppIds).push(appId);
      });
    }
  }

  for (const [i, g] of (data.userGrants ?? []).entries()) {
    const id = g.userGrantId || `${g.userId ?? ""}:${g.projectId ?? ""}`;
    await each("user_grant", id, async () => {
      if (!g.userId || !g.projectId) throw errors.invalidArgument("IMPORT-gr4n", `invalid user_grants[${i}]: user_id and project_id are required`);
      const there = await db.prisma.userGrant.findUnique({ where: { userId_projectId: { userId: g.userId, projectId: g.projectId } } });
      if (!there) {
        await inInstance(db, "user", g.userId, req.instanceId, `user_grants[${i}].user_id`);
        await inInstance(db, "project", g.projectId, req.instanceId, `user_grants[${i}].project_id`);
        await createUserGrant(es, {
          ...base,
          ...(g.userGrantId ? { id: g.userGrantId } : {}),
          userId: g.userId,
          projectId: g.projectId,
          roleKeys: g.roleKeys ?? [],
        });
      }
      ok.userGrants.push({ userId: g.userId, projectId: g.projectId });
    });
  }

  const members: [type: "org" | "project", contextId: string, m: { userId?: string; roles?: string[] }, field: string][] = [
    ...(data.orgMembers ?? []).map((m, i) => ["org", orgId, m, `org_members[${i}]`] as ["org", string, typeof m, string]),
    ...(data.projectMembers ?? []).map((m, i) => ["project", m.projectId ?? "", m, `project_members[${i}]`] as ["project", string, typeof m, string]),
  ];
  for (const [type, contextId, m, field] of members) {
    await each(`${type}_member`, `${contextId}:${m.userId ?? ""}`, async () => {
      if (!m.userId || !contextId)
        throw errors.invalidArgument("IMPORT-m3mb", `invalid ${field}: user_id${type === "project" ? " and project_id are" : " is"} required`);
      if (type === "project") await inOrg(db, "project", contextId, orgId, `${field}.project_id`);
      try {
        await addMembership(es, { ...base, type, contextId, userId: m.userId }, m.roles ?? []);
      } catch (err) {
        if (!isCode(err, Code.AlreadyExists)) throw err;
      }
      if (type === "org") ok.orgMembers.push(m.userId);
      else ok.projectMembers.push({ projectId: contextId, userId: m.userId });
    });
  }
}

type Table = "user" | "project" | "application";

/** Whether the object of this ID is already there (in this instance; in another: ALREADY_EXISTS, IDs are global). */
async function alreadyThere(db: Database, table: Table, id: string, instanceId: string): Promise<boolean> {
  const row = await (db.prisma[table] as unknown as { findUnique(a: object): Promise<{ instanceId: string } | null> }).findUnique({
    where: { id },
    select: { instanceId: true },
  });
  if (row && row.instanceId !== instanceId) throw errors.alreadyExists("IMPORT-1dx0", `the ${table} ID "${id}" is used in another instance`);
  return !!row;
}

/** NOT_FOUND naming `field` unless the referenced object is in the instance. */
async function inInstance(db: Database, table: Table, id: string, instanceId: string, field: string): Promise<void> {
  const row = await (db.prisma[table] as unknown as { findFirst(a: object): Promise<object | null> }).findFirst({
    where: { id, instanceId },
    select: { id: true },
  });
  if (!row) throw errors.notFound("IMPORT-r3f0", `${field}: ${table} "${id}" not found`);
}

/** NOT_FOUND naming `field` unless the project is one of the organisation's. */
async function inOrg(db: Database, _table: "project", id: string, orgId: string, field: string): Promise<void> {
  const row = await db.prisma.project.findFirst({ where: { id, orgId }, select: { id: true } });
  if (!row) throw errors.notFound("IMPORT-r3f1", `${field}: project "${id}" not found in organization "${orgId}"`);
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
