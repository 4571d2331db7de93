import * as client from "openid-client";
import { externalUserOf } from "./oidc.js";
import type { ExternalUser, Fetch, RedirectStart } from "./provider.js";

/**
 * Sign-in at a plain OAuth 2.0 provider (kind `oauth`, and the vendor kinds built on it): no discovery, no ID
 * token; the endpoints are configured, the code is exchanged (PKCE when `use_pkce`, the state always), and the
 * user is what the user endpoint answers for the access token, identified by `id_attribute`.
 */
export interface OAuthSettings {
  authorizationEndpoint: string;
  tokenEndpoint: string;
  userEndpoint: string;
  clientId: string;
  clientSecret: string | undefined;
  scopes: string[];
  /** The user endpoint's attribute that identifies the user for good (e.g. id). */
  idAttribute: string;
  usePkce: boolean;
  /** Scopes asked for whatever is configured (Azure AD: openid profile email User.Read). */
  requiredScopes?: string[];
  /** GitHub's e-mails API: the user's primary address and whether GitHub verified it. */
  emailsEndpoint?: string;
  /** The user endpoint's answer as OIDC claims (a vendor's names: Azure's mail and userPrincipalName). */
  mapUser?: (user: Record<string, unknown>) => Record<string, unknown>;
}

export class OAuthFederation {
  constructor(
    private readonly fetch: Fetch,
    /** SVC_IDP_INSECURE_HTTP: http:// endpoints are allowed (else refused before anything is sent). */
    private readonly options: { insecureHttp: boolean },
  ) {}

  private configOf(s: OAuthSettings): client.Configuration {
    const urls = [s.authorizationEndpoint, s.tokenEndpoint, s.userEndpoint].map((u) => new URL(u));
    const http = urls.some((u) => u.protocol === "http:");
    if (http && !this.options.insecureHttp) throw new Error("an endpoint is http://, and SVC_IDP_INSECURE_HTTP is off");
    // An OAuth server has no issuer of its own here: its authorization endpoint's origin stands for it (an `iss`
    // in its answer must then be that origin, RFC 9207).
    const server: client.ServerMetadata = { issuer: urls[0]!.origin, authorization_endpoint: s.authorizationEndpoint, token_endpoint: s.tokenEndpoint };
    const config = new client.Configuration(server, s.clientId, undefined, s.clientSecret ? client.ClientSecretPost(s.clientSecret) : client.None());
    config[client.customFetch] = this.fetch;
    if (http) client.allowInsecureRequests(config);
    return config;
  }

  async start(s: OAuthSettings, redirectUri: string): Promise<RedirectStart> {
    const config = this.configOf(s);
    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const scopes = [...new Set([...(s.requiredScopes ?? []), ...s.scopes])];
    const params: Record<string, string> = { redirect_uri: redirectUri, state, ...(scopes.length ? { scope: scopes.join(" ") } : {}) };
    if (s.usePkce) {
      params.code_challenge = await client.calculatePKCECodeChallenge(codeVerifier);
      params.code_challenge_method = "S256";
    }
    return { url: client.buildAuthorizationUrl(config, params).href, state, nonce: "", codeVerifier };
  }

  async finish(s: OAuthSettings, callbackUrl: URL, intent: { state: string; codeVerifier: string }): Promise<ExternalUser> {
    const config = this.configOf(s);
    const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
      expectedState: intent.state,
      ...(s.usePkce ? { pkceCodeVerifier: intent.codeVerifier } : {}),
    });
    const read = async (url: string) => {
      const answer = await client.fetchProtectedResource(config, tokens.access_token, new URL(url), "GET");
      if (!answer.ok) throw new Error(`${url === s.userEndpoint ? "the user" : "the e-mails"} endpoint answered ${answer.status}`);
      return answer.json() as Promise<unknown>;
    };
    const user: Record<string, unknown> = {
      ...((await read(s.userEndpoint)) as Record<string, unknown>),
      ...(s.emailsEndpoint ? primaryEmail(await read(s.emailsEndpoint)) : {}),
    };
    const id = user[s.idAttribute];
    if ((typeof id !== "string" && typeof id !== "number") || id === "") throw new Error(`the user endpoint's answer has no ${s.idAttribute}`);
    // The common names of such answers (GitHub's login, GitLab's username) besides the OIDC claim names.
    const username = user.preferred_username ?? user.login ?? user.username;
    const claims = { ...user, sub: String(id), ...(typeof username === "string" ? { preferred_username: username } : {}) };
    return { ...externalUserOf(s.mapUser ? s.mapUser(claims) : claims), tokens: { accessToken: tokens.access_token } };
  }
}

/** GitHub's e-mails answer (`[{email, primary, verified}]`) as the claims of its primary address; none: nothing. */
function primaryEmail(answer: unknown): { email?: string; email_verified?: boolean } {
  const list = Array.isArray(answer) ? (answer as { email?: unknown; primary?: unknown; verified?: unknown }[]) : [];
  const primary = list.find((e) => e.primary === true && typeof e.email === "string");
  return primary ? { email: primary.email as string, email_verified: primary.verified === true } : {};
}
