// The kinds of identity provider and the fields of each kind's configuration, as their protos define them: one form
// for every kind is built from this table. `key` is the field's name in the generated TypeScript, `proto` its
// name in the request (the server's errors name it: "invalid idp.config.client_id: ...").
import { AzureADTenantType } from "../../../../gen/svc/resources/idp/v3alpha/azure_ad_pb.js";
import { ProviderType } from "../../../../gen/svc/resources/idp/v3alpha/idp_pb.js";
import { SAMLBinding, SAMLNameIDFormat } from "../../../../gen/svc/resources/idp/v3alpha/saml_pb.js";
import type { messages } from "../../i18n/idps";

export type MsgKey = keyof (typeof messages)["en"];

export type FieldKind =
  /** a string */
  | "text"
  | "url"
  /** a multi-line string */
  | "textarea"
  /** write-only: never returned; `has` is the view's flag that one is stored */
  | "secret"
  | "secretArea"
  /** repeated string, typed separated by commas or spaces; patches set `replace` */
  | "list"
  | "bool"
  /** an enum: `options` */
  | "enum"
  /** google.protobuf.Duration, typed in seconds */
  | "seconds"
  /** AzureADTenant: a tenant type or one tenant's ID */
  | "tenant"
  /** LDAPAttributes: a string per attribute */
  | "attributes";

export interface FieldDef {
  key: string;
  proto: string;
  kind: FieldKind;
  label: MsgKey;
  hint?: MsgKey;
  required?: boolean;
  /** secret: the view's flag that one is stored */
  has?: string;
  /** list: the patch's replace flag */
  replace?: string;
  /** enum: the values */
  options?: { value: number; label: MsgKey }[];
  /** a patch sends it only when not empty (SAML: one of metadata XML and URL at a time) */
  onlyIfSet?: boolean;
}

export interface KindDef {
  id: string;
  /** The RPCs' infix: Create<rpc>IDP */
  rpc: string;
  type: ProviderType;
  label: MsgKey;
  text: MsgKey;
  fields: FieldDef[];
}

const clientId: FieldDef = { key: "clientId", proto: "client_id", kind: "text", label: "clientId", required: true };
const clientSecret: FieldDef = { key: "clientSecret", proto: "client_secret", kind: "secret", label: "clientSecret", has: "hasClientSecret" };
const scopes: FieldDef = { key: "scopes", proto: "scopes", kind: "list", label: "scopes", hint: "scopesHint", replace: "replaceScopes" };
const issuer: FieldDef = { key: "issuer", proto: "issuer", kind: "url", label: "issuer", hint: "issuerHint", required: true };
const usePkce: FieldDef = { key: "usePkce", proto: "use_pkce", kind: "bool", label: "usePkce" };
const endpoints: FieldDef[] = [
  { key: "authorizationEndpoint", proto: "authorization_endpoint", kind: "url", label: "authorizationEndpoint", required: true },
  { key: "tokenEndpoint", proto: "token_endpoint", kind: "url", label: "tokenEndpoint", required: true },
  { key: "userEndpoint", proto: "user_endpoint", kind: "url", label: "userEndpoint", required: true },
];

/** LDAPAttributes: TypeScript key, proto name, label. */
export const LDAP_ATTRIBUTES: [string, string, MsgKey][] = [
  ["idAttribute", "id_attribute", "attrId"],
  ["firstNameAttribute", "first_name_attribute", "attrFirstName"],
  ["lastNameAttribute", "last_name_attribute", "attrLastName"],
  ["displayNameAttribute", "display_name_attribute", "attrDisplayName"],
  ["nickNameAttribute", "nick_name_attribute", "attrNickName"],
  ["preferredUsernameAttribute", "preferred_username_attribute", "attrPreferredUsername"],
  ["emailAttribute", "email_attribute", "attrEmail"],
  ["emailVerifiedAttribute", "email_verified_attribute", "attrEmailVerified"],
  ["phoneAttribute", "phone_attribute", "attrPhone"],
  ["phoneVerifiedAttribute", "phone_verified_attribute", "attrPhoneVerified"],
  ["preferredLanguageAttribute", "preferred_language_attribute", "attrPreferredLanguage"],
  ["avatarUrlAttribute", "avatar_url_attribute", "attrAvatarUrl"],
  ["profileAttribute", "profile_attribute", "attrProfile"],
];

export const TENANT_TYPES: { value: AzureADTenantType; label: MsgKey }[] = [
  { value: AzureADTenantType.AZURE_AD_TENANT_TYPE_COMMON, label: "tenantCommon" },
  { value: AzureADTenantType.AZURE_AD_TENANT_TYPE_ORGANISATIONS, label: "tenantOrganisations" },
  { value: AzureADTenantType.AZURE_AD_TENANT_TYPE_CONSUMERS, label: "tenantConsumers" },
];

export const KINDS: KindDef[] = [
  {
    id: "oidc",
    rpc: "OIDC",
    type: ProviderType.OIDC,
    label: "kindOidc",
    text: "kindOidcText",
    fields: [
      issuer,
      clientId,
      clientSecret,
      scopes,
      { key: "isIdTokenMapping", proto: "is_id_token_mapping", kind: "bool", label: "isIdTokenMapping" },
      usePkce,
    ],
  },
  {
    id: "oauth",
    rpc: "OAuth",
    type: ProviderType.OAUTH,
    label: "kindOauth",
    text: "kindOauthText",
    fields: [
      clientId,
      clientSecret,
      ...endpoints,
      scopes,
      { key: "idAttribute", proto: "id_attribute", kind: "text", label: "idAttribute", hint: "idAttributeHint", required: true },
      usePkce,
    ],
  },
  {
    id: "jwt",
    rpc: "JWT",
    type: ProviderType.JWT,
    label: "kindJwt",
    text: "kindJwtText",
    fields: [
      { ...issuer, hint: undefined },
      { key: "jwtEndpoint", proto: "jwt_endpoint", kind: "url", label: "jwtEndpoint", hint: "jwtEndpointHint", required: true },
      { key: "keysEndpoint", proto: "keys_endpoint", kind: "url", label: "keysEndpoint", required: true },
      { key: "headerName", proto: "header_name", kind: "text", label: "headerName", hint: "headerNameHint", required: true },
    ],
  },
  {
    id: "ldap",
    rpc: "LDAP",
    type: ProviderType.LDAP,
    label: "kindLdap",
    text: "kindLdapText",
    fields: [
      { key: "servers", proto: "servers", kind: "list", label: "servers", hint: "serversHint", replace: "replaceServers", required: true },
      { key: "startTls", proto: "start_tls", kind: "bool", label: "startTls" },
      { key: "baseDn", proto: "base_dn", kind: "text", label: "baseDn", hint: "baseDnHint", required: true },
      { key: "bindDn", proto: "bind_dn", kind: "text", label: "bindDn", hint: "bindDnHint", required: true },
      { key: "bindPassword", proto: "bind_password", kind: "secret", label: "bindPassword", has: "hasBindPassword" },
      { key: "userBase", proto: "user_base", kind: "text", label: "userBase", hint: "userBaseHint", required: true },
      {
        key: "userObjectClasses",
        proto: "user_object_classes",
        kind: "list",
        label: "userObjectClasses",
        hint: "userObjectClassesHint",
        replace: "replaceUserObjectClasses",
      },
      { key: "userFilters", proto: "user_filters", kind: "list", label: "userFilters", hint: "userFiltersHint", replace: "replaceUserFilters" },
      { key: "timeout", proto: "timeout", kind: "seconds", label: "timeout", hint: "timeoutHint" },
      { key: "rootCa", proto: "root_ca", kind: "textarea", label: "rootCa", hint: "rootCaHint" },
      { key: "attributes", proto: "attributes", kind: "attributes", label: "attributes", hint: "attributesHint" },
    ],
  },
  {
    id: "saml",
    rpc: "SAML",
    type: ProviderType.SAML,
    label: "kindSaml",
    text: "kindSamlText",
    fields: [
      { key: "metadataXml", proto: "metadata_xml", kind: "textarea", label: "metadataXml", hint: "metadataXmlHint", onlyIfSet: true },
      { key: "metadataUrl", proto: "metadata_url", kind: "url", label: "metadataUrl", hint: "metadataUrlHint", onlyIfSet: true },
      {
        key: "binding",
        proto: "binding",
        kind: "enum",
        label: "binding",
        options: [
          { value: SAMLBinding.SAML_BINDING_UNSPECIFIED, label: "bindingAuto" },
          { value: SAMLBinding.SAML_BINDING_POST, label: "bindingPost" },
          { value: SAMLBinding.SAML_BINDING_REDIRECT, label: "bindingRedirect" },
        ],
      },
      { key: "withSignedRequest", proto: "with_signed_request", kind: "bool", label: "withSignedRequest" },
      {
        key: "nameIdFormat",
        proto: "name_id_format",
        kind: "enum",
        label: "nameIdFormat",
        options: [
          { value: SAMLNameIDFormat.SAML_NAME_ID_FORMAT_UNSPECIFIED, label: "nameIdDefault" },
          { value: SAMLNameIDFormat.SAML_NAME_ID_FORMAT_PERSISTENT, label: "nameIdPersistent" },
          { value: SAMLNameIDFormat.SAML_NAME_ID_FORMAT_EMAIL_ADDRESS, label: "nameIdEmail" },
          { value: SAMLNameIDFormat.SAML_NAME_ID_FORMAT_TRANSIENT, label: "nameIdTransient" },
          { value: SAMLNameIDFormat.SAML_NAME_ID_FORMAT_UNSPECIFIED_FORMAT, label: "nameIdUnspecified" },
        ],
      },
      { key: "transientMappingAttributeName", proto: "transient_mapping_attribute_name", kind: "text", label: "transientMappingAttributeName" },
    ],
  },
  { id: "google", rpc: "Google", type: ProviderType.GOOGLE, label: "kindGoogle", text: "kindGoogleText", fields: [clientId, clientSecret, scopes] },
  { id: "github", rpc: "GitHub", type: ProviderType.GITHUB, label: "kindGithub", text: "kindGithubText", fields: [clientId, clientSecret, scopes] },
  {
    id: "github_enterprise",
    rpc: "GitHubEnterprise",
    type: ProviderType.GITHUB_ES,
    label: "kindGithubEnterprise",
    text: "kindGithubEnterpriseText",
    fields: [clientId, clientSecret, ...endpoints, scopes],
  },
  { id: "gitlab", rpc: "GitLab", type: ProviderType.GITLAB, label: "kindGitlab", text: "kindGitlabText", fields: [clientId, clientSecret, scopes] },
  {
    id: "gitlab_self_hosted",
    rpc: "GitLabSelfHosted",
    type: ProviderType.GITLAB_SELF_HOSTED,
    label: "kindGitlabSelfHosted",
    text: "kindGitlabSelfHostedText",
    fields: [{ ...issuer, hint: undefined }, clientId, clientSecret, scopes],
  },
  {
    id: "azure_ad",
    rpc: "AzureAD",
    type: ProviderType.AZURE_AD,
    label: "kindAzureAd",
    text: "kindAzureAdText",
    fields: [
      clientId,
      clientSecret,
      { key: "tenant", proto: "tenant", kind: "tenant", label: "tenant" },
      { key: "emailVerified", proto: "email_verified", kind: "bool", label: "emailVerified" },
      scopes,
    ],
  },
  {
    id: "apple",
    rpc: "Apple",
    type: ProviderType.APPLE,
    label: "kindApple",
    text: "kindAppleText",
    fields: [
      clientId,
      { key: "teamId", proto: "team_id", kind: "text", label: "teamId", hint: "teamIdHint", required: true },
      { key: "keyId", proto: "key_id", kind: "text", label: "keyId", hint: "keyIdHint", required: true },
      { key: "privateKey", proto: "private_key", kind: "secretArea", label: "privateKey", has: "hasPrivateKey" },
      scopes,
    ],
  },
];

export const kindById = (id: string) => KINDS.find((k) => k.id === id);
export const kindByType = (type: ProviderType | undefined) => KINDS.find((k) => k.type === type);
