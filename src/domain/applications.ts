/**
 * What an application is configured with: the events store it (src/events/definitions.ts), the commands check
 * it (src/command/applications.ts), so it lives here, below both.
 */

export type ResponseType = "code" | "id_token" | "id_token token";
export type GrantType = "authorization_code" | "implicit" | "refresh_token" | "urn:ietf:params:oauth:grant-type:token-exchange";

// Type aliases, not interfaces: the configuration is stored as JSON, which an interface's type cannot promise.
export type OidcConfig = {
  redirectUris: string[];
  responseTypes: ResponseType[];
  grantTypes: GrantType[];
  appType: "web" | "user_agent" | "native";
  authMethod: "client_secret_basic" | "client_secret_post" | "none" | "private_key_jwt";
  postLogoutRedirectUris: string[];
  accessTokenType: "opaque" | "jwt";
  idTokenUserinfoAssertion: boolean;
  accessTokenRoleAssertion: boolean;
  idTokenRoleAssertion: boolean;
  devMode: boolean;
  clockSkewMs: number;
};

export type ApiConfig = {
  authMethod: "client_secret_basic" | "private_key_jwt";
};

/**
 * A redirect URI given as a path: one on the issuer the request came through (docs/decisions.md "Console"). "/" then
 * no second "/" or "\\" (which browsers read as a network-path reference to another host), no whitespace.
 */
export function isIssuerPath(value: string): boolean {
  return /^\/(?![/\\])\S*$/.test(value);
}

/** A registered redirect URI as the request's issuer makes it: a path joined to the issuer, a URI as it is. */
export function onIssuer(registered: string, issuer: string): string {
  return isIssuerPath(registered) ? `${issuer}${registered}` : registered;
}
