/** An OAuth error response (RFC 6749 §5.2): `error`, `error_description`, and the HTTP status it goes with. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    // Descriptions go into headers and redirects: never control characters.
    super(description.replace(/[\r\n\t]/g, " "));
  }

  body() {
    return { error: this.error, error_description: this.message };
  }
}

export const oauth = {
  invalidRequest: (d: string) => new OAuthError("invalid_request", d),
  invalidClient: (d: string) => new OAuthError("invalid_client", d, 401),
  invalidGrant: (d: string) => new OAuthError("invalid_grant", d),
  invalidScope: (d: string) => new OAuthError("invalid_scope", d),
  unauthorizedClient: (d: string) => new OAuthError("unauthorized_client", d),
  unsupportedGrantType: (d: string) => new OAuthError("unsupported_grant_type", d),
  unsupportedResponseType: (d: string) => new OAuthError("unsupported_response_type", d),
  invalidToken: (d: string) => new OAuthError("invalid_token", d, 401),
  loginRequired: (d: string) => new OAuthError("login_required", d),
  interactionRequired: (d: string) => new OAuthError("interaction_required", d),
  serverError: (d: string) => new OAuthError("server_error", d, 500),
};
