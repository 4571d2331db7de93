/** What an identity provider is configured with, and the state policies of reusable resources (query/reuse.ts). */

/** The provider type stored for GitLab (ZITADEL's numbering). */
export const GITLAB = 8;

export interface IdpConfig {
  name: string;
  /** The provider's options message as proto JSON. */
  options: object;
  clientId: string;
  scopes: string[];
}

/**
 * A reusable resource's state in a context: active, inactive, or what the parent context says.
 */
export type Policy = "activate" | "deactivate" | "inherit";
