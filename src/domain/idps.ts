/** What an identity provider is configured with, and the state policies of reusable resources (query/reuse.ts). */

/** The kinds of provider, as the REST paths name them (`/resources/v3alpha/idps/<kind>`). */
export const IDP_KINDS = [
  "oidc",
  "jwt",
  "ldap",
  "oauth",
  "azure_ad",
  "github",
  "github_enterprise",
  "gitlab",
  "gitlab_self_hosted",
  "google",
  "apple",
  "saml",
] as const;
export type IdpKind = (typeof IDP_KINDS)[number];

/** The ProviderType number stored for each kind (ZITADEL's numbering). */
export const providerTypeOf: Record<IdpKind, number> = {
  oidc: 1,
  jwt: 2,
  ldap: 3,
  oauth: 4,
  azure_ad: 5,
  github: 6,
  github_enterprise: 7,
  gitlab: 8,
  gitlab_self_hosted: 9,
  google: 10,
  apple: 11,
  saml: 12,
};
export const GITLAB = providerTypeOf.gitlab;

export const kindOfType = (type: number): IdpKind | undefined => IDP_KINDS.find((k) => providerTypeOf[k] === type);

/**
 * The one write-only field of a kind's configuration (proto JSON name): sealed at rest, never returned, kept by
 * a patch that leaves it out. SAML, JWT have none.
 */
export const secretFieldOf: Partial<Record<IdpKind, "clientSecret" | "bindPassword" | "privateKey">> = {
  oidc: "clientSecret",
  ldap: "bindPassword",
  oauth: "clientSecret",
  azure_ad: "clientSecret",
  github: "clientSecret",
  github_enterprise: "clientSecret",
  gitlab: "clientSecret",
  gitlab_self_hosted: "clientSecret",
  google: "clientSecret",
  apple: "privateKey",
};

export interface IdpConfig {
  name: string;
  /** The provider's options message as proto JSON. */
  options: object;
  /** The kind's configuration as proto JSON (lowerCamelCase), without its secret. */
  config: object;
}

/**
 * A reusable resource's state in a context: active, inactive, or what the parent context says.
 */
export type Policy = "activate" | "deactivate" | "inherit";
