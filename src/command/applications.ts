import { generateKeyPairSync, randomBytes } from "node:crypto";
import { hashPassword } from "../crypto/password.js";
import { errors } from "../errors/errors.js";
import type { PayloadOf } from "../eventstore/definition.js";
import type { EventStore, Tx } from "../eventstore/eventstore.js";
import { newId } from "../ids.js";
import { isIssuerPath, type ApiConfig, type GrantType, type OidcConfig } from "../domain/applications.js";
import { changeAggregate, withUniqueConflict, type ChangeDetails, type Decision } from "./aggregate.js";
import {
  apiAppAdded,
  appChanged,
  appDeactivated,
  appKeyAdded,
  appKeyRemoved,
  appReactivated,
  appRemoved,
  appSecretSet,
  oidcAppAdded,
} from "../events/index.js";

export type { ApiConfig, GrantType, OidcConfig, ResponseType } from "../domain/applications.js";

export type AppConfig = { kind: "oidc"; oidc: OidcConfig } | { kind: "api"; api: ApiConfig };

const invalid = (field: string, why: string) => errors.invalidArgument("APP-c0nf", `invalid application.oidc.${field}: ${why}`);
const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** The rules an OIDC configuration must follow (RFC 6749, OpenID Connect Core, RFC 8252 for native apps). */
export function checkOidcConfig(c: OidcConfig): void {
  const has = (g: GrantType) => c.grantTypes.includes(g);
  if (c.responseTypes.includes("code") !== has("authorization_code")) {
    throw invalid("response_types", "the response type code and the grant type authorization_code go together");
  }
  const implicitResponse = c.responseTypes.some((r) => r !== "code");
  if (implicitResponse !== has("implicit"))
    throw invalid("grant_types", "the response types id_token and id_token token and the grant type implicit go together");
  if (has("refresh_token") && !has("authorization_code")) throw invalid("grant_types", "refresh_token needs authorization_code");
  if ((has("authorization_code") || has("implicit")) && !c.redirectUris.length)
    throw invalid("redirect_uris", "at least one is needed for the code and implicit flows");
  if (c.appType !== "web" && c.authMethod !== "none") throw invalid("auth_method_type", `${c.appType} apps cannot keep a secret: use NONE (PKCE)`);
  if (c.clockSkewMs < 0 || c.clockSkewMs > 5000) throw invalid("clock_skew", "must be between 0s and 5s");
  const checkUri = (field: string) => (uri: string, i: number) => {
    if (isIssuerPath(uri)) return;
    const u = new URL(uri);
    if (u.hash) throw invalid(`${field}[${i}]`, "must not have a fragment");
    const loopback = u.protocol === "http:" && LOOPBACK.has(u.hostname);
    if (c.appType === "native") return;
    if (u.protocol === "https:" || (u.protocol === "http:" && (c.devMode || loopback))) return;
    throw invalid(`${field}[${i}]`, `${c.appType} apps need https (http only for localhost, or with dev_mode)`);
  };
  c.redirectUris.forEach(checkUri("redirect_uris"));
  c.postLogoutRedirectUris.forEach(checkUri("post_logout_redirect_uris"));
}

const needsSecret = (c: AppConfig) =>
  c.kind === "oidc" ? c.oidc.authMethod === "client_secret_basic" || c.oidc.authMethod === "client_secret_post" : c.api.authMethod === "client_secret_basic";

const newSecret = () => randomBytes(32).toString("base64url");
const slug = (name: string) =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "") || "project";
const nameTaken = (name: string) => errors.alreadyExists("APP-n4me", `the project already has an application named "${name}"`);

type AppRow = NonNullable<Awaited<ReturnType<Tx["application"]["findUnique"]>>>;

export async function createApplication(
  es: EventStore,
  a: { instanceId: string; projectId: string; creator: string; name: string; config: AppConfig; id?: string },
) {
  if (a.config.kind === "oidc") checkOidcConfig(a.config.oidc);
  // A given ID: an import keeps the IDs of the export (and so the client ID, made of it).
  const id = a.id || newId();
  const secret = needsSecret(a.config) ? newSecret() : undefined;
  const secretHash = secret ? await hashPassword(secret) : null;
  const { result } = await withUniqueConflict(
    "Application",
    () => nameTaken(a.name),
    () =>
      es.execute(async (w) => {
        const project = await w.tx.project.findFirst({ where: { id: a.projectId, instanceId: a.instanceId } });
        if (!project) throw errors.notFound("APP-pr0c", `project "${a.projectId}" not found`);
        if (await w.tx.application.findFirst({ where: { projectId: project.id, name: a.name } })) throw nameTaken(a.name);
        const clientId = `${id}@${slug(project.name)}`;
        const ref = { aggregateId: id, resourceOwner: project.orgId };
        const fields = { projectId: project.id, name: a.name, clientId, secretHash };
        const [e] = await w.push(a.instanceId, a.creator, [
          a.config.kind === "oidc"
            ? oidcAppAdded.event(ref, { ...fields, config: a.config.oidc })
            : apiAppAdded.event(ref, { ...fields, config: a.config.api }),
        ]);
        const details: ChangeDetails = { id, sequence: e!.sequence, changeDate: e!.createdAt, instanceId: a.instanceId, resourceOwner: project.orgId };
        return { details, clientId };
      }),
  );
  return { ...result, clientSecret: secret };
}

export function changeApplication(es: EventStore, a: { instanceId: string; id: string; creator: string }, decide: Decision<AppRow, "application">) {
  return changeAggregate(es, {
    aggregateType: "application",
    ...a,
    load: (w) => w.tx.application.findUnique({ where: { id: a.id } }),
    notFound: () => errors.notFound("APP-n0tf", `application "${a.id}" not found`),
    ownerOf: (x) => x.orgId,
    decide,
  });
}

export function patchApplication(es: EventStore, a: { instanceId: string; id: string; creator: string; name?: string; config?: AppConfig }) {
  if (a.config?.kind === "oidc") checkOidcConfig(a.config.oidc);
  return withUniqueConflict(
    "Application",
    () => nameTaken(a.name ?? ""),
    () =>
      changeApplication(es, a, async (app, w) => {
        const changed: PayloadOf<typeof appChanged> = {};
        if (a.name !== undefined && a.name !== app.name) {
          if (await w.tx.application.findFirst({ where: { projectId: app.projectId, name: a.name, NOT: { id: app.id } } })) throw nameTaken(a.name);
          changed.name = a.name;
        }
        if (a.config) {
          if (a.config.kind !== app.kind)
            throw errors.invalidArgument("APP-k1nd", `invalid application: the application is of type ${app.kind}; its type cannot change`);
          const config = a.config.kind === "oidc" ? a.config.oidc : a.config.api;
          if (JSON.stringify(config) !== JSON.stringify(app.config)) changed.config = config;
        }
        return Object.keys(changed).length ? [appChanged.change(changed)] : [];
      }),
  );
}

export function setApplicationState(es: EventStore, a: { instanceId: string; id: string; creator: string; active: boolean }) {
  return changeApplication(es, a, (app) => ((app.state === "active") === a.active ? [] : [(a.active ? appReactivated : appDeactivated).change()]));
}

export function removeApplication(es: EventStore, a: { instanceId: string; id: string; creator: string }) {
  return changeApplication(es, a, () => [appRemoved.change()]);
}

export async function generateApplicationSecret(es: EventStore, a: { instanceId: string; id: string; creator: string }) {
  const secret = newSecret();
  const secretHash = await hashPassword(secret);
  let clientId = "";
  const details = await changeApplication(es, a, (app) => {
    const config = { kind: app.kind, oidc: app.config, api: app.config } as unknown as AppConfig;
    if (!needsSecret(config)) throw errors.failedPrecondition("APP-s3cr", "the application's auth method uses no client secret");
    clientId = app.clientId;
    return [appSecretSet.change({ secretHash })];
  });
  return { details, clientId, clientSecret: secret };
}

export async function addApplicationKey(es: EventStore, a: { instanceId: string; id: string; creator: string; expiresAt: Date | null }) {
  const keyId = newId();
  const { publicKey, privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  let clientId = "";
  const details = await changeApplication(es, a, (app) => {
    if ((app.config as { authMethod?: string }).authMethod !== "private_key_jwt") {
      throw errors.failedPrecondition("APP-k3y1", "keys are for applications that authenticate with private_key_jwt");
    }
    clientId = app.clientId;
    return [appKeyAdded.change({ keyId, publicKey, expiresAt: a.expiresAt?.toISOString() ?? null })];
  });
  const keyFile = { type: "application", keyId, key: privateKey, appId: a.id, clientId, expirationDate: a.expiresAt?.toISOString() ?? null };
  return { details, keyId, keyContent: JSON.stringify(keyFile) };
}

export function removeApplicationKey(es: EventStore, a: { instanceId: string; id: string; creator: string; keyId: string }) {
  return changeApplication(es, a, async (app, w) => {
    if (!(await w.tx.applicationKey.findFirst({ where: { id: a.keyId, applicationId: app.id } }))) {
      throw errors.notFound("APP-k3y2", `key "${a.keyId}" of application "${app.id}" not found`);
    }
    return [appKeyRemoved.change({ keyId: a.keyId })];
  });
}
