import { type DescMessage, fromJson, type JsonObject, type JsonValue, type Message, toJson } from "@bufbuild/protobuf";
import { IdentityProviderService } from "../../../gen/svc/resources/idp/v3alpha/idp_service_pb.js";
import { IDP_KINDS, type IdpKind, secretFieldOf } from "../../domain/idps.js";
import { errors } from "../../errors/errors.js";
import { violation } from "../../validation/validate.js";
import { checkKindConfig } from "./config-checks.js";

/**
 * Each provider kind's messages, derived from its three RPCs (`Create<K>IDP`, `Patch<K>IDP`, `Get<K>IDP`): the
 * configuration a create takes, the patch of it, and the view a get returns. The handlers of every kind are one
 * code path over these (service.ts); the stored configuration is the configuration message as proto JSON.
 */
export interface KindMessages {
  kind: IdpKind;
  /** As the RPCs name it: OIDC, AzureAD, GitLabSelfHosted, ... */
  name: string;
  config: DescMessage;
  patch: DescMessage;
  /** `<K>IDPView`, `<K>ConfigView`, and the Get message around them. */
  view: DescMessage;
  configView: DescMessage;
  get: DescMessage;
  secret: "clientSecret" | "bindPassword" | "privateKey" | undefined;
}

const names: Record<IdpKind, string> = {
  oidc: "OIDC",
  jwt: "JWT",
  ldap: "LDAP",
  oauth: "OAuth",
  azure_ad: "AzureAD",
  github: "GitHub",
  github_enterprise: "GitHubEnterprise",
  gitlab: "GitLab",
  gitlab_self_hosted: "GitLabSelfHosted",
  google: "Google",
  apple: "Apple",
  saml: "SAML",
};

function messageOf(desc: DescMessage, fieldName: string): DescMessage {
  const f = desc.fields.find((x) => x.name === fieldName);
  if (f?.fieldKind !== "message") throw new Error(`${desc.typeName} has no message field ${fieldName}`);
  return f.message;
}

function methodOf(rpc: string) {
  const m = IdentityProviderService.methods.find((x) => x.name === rpc);
  if (!m) throw new Error(`IdentityProviderService has no RPC ${rpc}`);
  return m;
}

export const kindMessages: Record<IdpKind, KindMessages> = Object.fromEntries(
  IDP_KINDS.map((kind) => {
    const name = names[kind];
    const get = messageOf(methodOf(`Get${name}IDP`).output, "idp");
    const view = messageOf(get, "idp");
    return [
      kind,
      {
        kind,
        name,
        config: messageOf(messageOf(methodOf(`Create${name}IDP`).input, "idp"), "config"),
        patch: messageOf(messageOf(methodOf(`Patch${name}IDP`).input, "idp"), "config"),
        view,
        configView: messageOf(view, "config"),
        get,
        secret: secretFieldOf[kind],
      },
    ];
  }),
) as Record<IdpKind, KindMessages>;

/** A configuration as stored: proto JSON of the kind's configuration without its secret, and the secret. */
export interface StoredConfig {
  config: JsonObject;
  secret: string | undefined;
}

/**
 * A configuration given as proto JSON (an import's), checked as a create's: it parses as the kind's message,
 * passes its field options and config-checks.ts; the secret, which does not travel, is dropped.
 */
export function configOfJson(k: KindMessages, json: JsonObject, field: string): StoredConfig {
  let message: Message;
  try {
    message = fromJson(k.config, json, { ignoreUnknownFields: false });
  } catch (e) {
    throw errors.invalidArgument("IDP-j50n", `invalid ${field}: ${(e as Error).message}`);
  }
  const v = violation(k.config, message);
  if (v) throw errors.invalidArgument("IDP-f1d3", `invalid ${field}.${v}`);
  return { config: configOfCreate(k, message, field).config, secret: undefined };
}

/** A create's configuration, checked (config-checks.ts), as stored. `field`: its path in the request. */
export function configOfCreate(k: KindMessages, config: Message | undefined, field: string): StoredConfig {
  const json = config ? (toJson(k.config, config) as JsonObject) : {};
  return split(k, checked(k, json, field));
}

/**
 * Fields of a kind's configuration of which one is stored at a time (proto JSON names): a patch that gives one of
 * them clears the others (SAML's metadata as XML or from a URL).
 */
const alternatives: Partial<Record<IdpKind, string[][]>> = { saml: [["metadataXml", "metadataUrl"]] };

/**
 * A patch applied to the stored configuration: present fields replace theirs (and clear their `alternatives`); a list replaces its own when it is
 * not empty or its `replace_<list>` is true; a message field (LDAP attributes, a tenant, a timeout) replaces
 * the whole; the secret, when present, replaces the stored one. Undefined config: nothing of it changes.
 */
export function configOfPatch(k: KindMessages, stored: JsonObject, patch: Message | undefined, field: string): Partial<StoredConfig> {
  if (!patch) return {};
  const json = toJson(k.patch, patch) as JsonObject;
  const merged: JsonObject = { ...stored };
  let touched = false;
  for (const f of k.patch.fields) {
    if (f.name.startsWith("replace_")) continue;
    const key = f.jsonName;
    if (f.fieldKind === "list") {
      const replace = json[`replace${key[0]!.toUpperCase()}${key.slice(1)}`] === true;
      if (json[key] === undefined && !replace) continue;
      merged[key] = json[key] ?? [];
    } else if (json[key] !== undefined) merged[key] = json[key]!;
    else continue;
    touched = true;
  }
  if (!touched) return {};
  for (const group of alternatives[k.kind] ?? []) {
    if (group.some((key) => json[key] !== undefined)) for (const key of group) if (json[key] === undefined) delete merged[key];
  }
  // What the create checks holds for the result too (a patch cannot leave LDAP without servers).
  const { config, secret } = split(k, checked(k, merged, field));
  return { config, ...(secret !== undefined ? { secret } : {}) };
}

/** The view a get returns: the stored configuration, and whether a secret is stored instead of the secret. */
export function viewOfConfig(k: KindMessages, stored: JsonObject, hasSecret: boolean): Message {
  const json: JsonObject = { ...stored };
  if (k.secret) json[`has${k.secret[0]!.toUpperCase()}${k.secret.slice(1)}`] = hasSecret;
  return fromJson(k.configView, json, { ignoreUnknownFields: true });
}

function checked(k: KindMessages, json: JsonObject, field: string): JsonObject {
  // Normalised through the message (defaults dropped, enums by name), as a create would store it.
  const normal = toJson(k.config, fromJson(k.config, json as JsonValue)) as JsonObject;
  checkKindConfig(k.kind, normal, field);
  return normal;
}

function split(k: KindMessages, json: JsonObject): StoredConfig {
  if (!k.secret) return { config: json, secret: undefined };
  const { [k.secret]: secret, ...config } = json;
  if (secret !== undefined && typeof secret !== "string") throw errors.internal("IDP-s3cr", "a secret field is not a string");
  return { config, secret: secret || undefined };
}
