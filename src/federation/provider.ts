import type { IdpKind } from "../domain/idps.js";

/**
 * What every external identity provider's protocol gives the sign-in (src/federation/<protocol>.ts): where to
 * send the browser, and the user its answer vouches for.
 */

/** The start of a redirect sign-in: the provider's URL, and what its answer is checked against. */
export interface RedirectStart {
  /** Where to send the browser; empty when it must post `form` instead (SAML's HTTP-POST binding). */
  url: string;
  form?: { action: string; fields: Record<string, string> };
  state: string;
  /** The OIDC nonce; a SAML request's ID (what the response must answer). */
  nonce: string;
  codeVerifier: string;
}

/** The user an external provider vouched for, in the account's terms. */
export interface ExternalUser {
  /** The provider's stable ID of the user (OIDC `sub`): the link's external user ID. */
  id: string;
  username?: string | undefined;
  email?: string | undefined;
  /** Whether the provider asserts the e-mail address as verified (never assumed). */
  emailVerified: boolean;
  givenName?: string | undefined;
  familyName?: string | undefined;
  displayName?: string | undefined;
  preferredLanguage?: string | undefined;
  /** Everything the provider said, as it said it (the intents API's raw_information). */
  raw: Record<string, unknown>;
  /** The provider's tokens, for the intents API's caller (never stored in an event or logged). */
  tokens?: { accessToken?: string | undefined; idToken?: string | undefined };
}

/** A provider as stored: its kind, its configuration (proto JSON), its secret opened, and a key of its version. */
export interface StoredProvider {
  id: string;
  kind: IdpKind;
  /** Changes when its configuration does: what was discovered for it is kept under this key. */
  key: string;
  config: Record<string, unknown>;
  secret: string | undefined;
}

/** The `fetch` every request to a provider goes through (src/net/outbound-http.ts `outboundFetch`). */
export type Fetch = (url: string, init: { method?: string; headers?: HeadersInit; body?: unknown }) => Promise<Response>;
