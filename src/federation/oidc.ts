import { jwtVerify } from "jose";
import * as client from "openid-client";
import type { ExternalUser, Fetch, RedirectStart } from "./provider.js";
import { RemoteKeySets, SIGNATURE_ALGORITHMS } from "./remote-keys.js";

/**
 * Sign-in at an OpenID Connect provider (kind `oidc`) with openid-client: discovery from the issuer, the
 * authorization code flow with PKCE (when `use_pkce`; the state and nonce always), the ID token verified against
 * the provider's keys (kept, and fetched again for an unknown `kid`), then userinfo
 * unless `is_id_token_mapping`. Every request goes through `fetch` (the outbound policy, src/net).
 */
export interface OidcSettings {
  issuer: string;
  clientId: string;
  /** A function: a secret made for each token request (Apple's, a JWT signed with the client's key). */
  clientSecret: string | (() => string) | undefined;
  scopes: string[];
  usePkce: boolean;
  isIdTokenMapping: boolean;
  /** The scopes as configured, without `openid` added (Apple knows only name and email, and sends an ID token anyway). */
  exactScopes?: boolean;
  /** More parameters of the authorization request (Apple: response_mode=form_post). */
  authorizationParams?: Record<string, string>;
  /** The claims as the account's fields: what a vendor's quirks change (Google's username is the e-mail). */
  mapClaims?: (claims: Record<string, unknown>) => Record<string, unknown>;
}

/** The token endpoint's client authentication: client_secret_post with the secret, or a fresh one each time. */
function clientAuthOf(secret: OidcSettings["clientSecret"]): client.ClientAuth {
  if (secret === undefined) return client.None();
  if (typeof secret === "string") return client.ClientSecretPost(secret);
  return (_as, metadata, body) => {
    body.set("client_id", metadata.client_id);
    body.set("client_secret", secret());
  };
}

/** How long a provider's discovered metadata is reused before it is read again. */
const METADATA_TTL_MS = 10 * 60_000;

export class OidcFederation {
  private readonly configs = new Map<string, { at: number; config: Promise<client.Configuration> }>();
  private readonly keys: RemoteKeySets;

  constructor(
    private readonly fetch: Fetch,
    /** SVC_IDP_INSECURE_HTTP: an http:// issuer is allowed (else refused before anything is sent). */
    private readonly options: { insecureHttp: boolean },
  ) {
    this.keys = new RemoteKeySets(fetch);
  }

  /** The provider's configuration, discovered once per provider version (`key`) and reused for a while. */
  private configOf(key: string, s: OidcSettings): Promise<client.Configuration> {
    const cached = this.configs.get(key);
    if (cached && Date.now() - cached.at < METADATA_TTL_MS) return cached.config;
    const http = new URL(s.issuer).protocol === "http:";
    if (http && !this.options.insecureHttp) return Promise.reject(new Error("the issuer is http://, and SVC_IDP_INSECURE_HTTP is off"));
    const config = client
      .discovery(new URL(s.issuer), s.clientId, undefined, clientAuthOf(s.clientSecret), {
        [client.customFetch]: this.fetch,
        ...(http ? { execute: [client.allowInsecureRequests] } : {}),
        timeout: 10,
      })
      .then((c) => {
        c[client.customFetch] = this.fetch;
        return c;
      });
    // A failed discovery is not kept: the next sign-in tries again.
    config.catch(() => this.configs.delete(key));
    if (this.configs.size > 1000) this.configs.clear();
    this.configs.set(key, { at: Date.now(), config });
    return config;
  }

  async start(key: string, s: OidcSettings, redirectUri: string): Promise<RedirectStart> {
    const config = await this.configOf(key, s);
    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    // openid always: the sign-in needs the ID token.
    const scopes = s.exactScopes ? s.scopes : s.scopes.length ? [...new Set(["openid", ...s.scopes])] : ["openid", "profile", "email"];
    const params: Record<string, string> = {
      ...s.authorizationParams,
      redirect_uri: redirectUri,
      scope: scopes.join(" "),
      state,
      nonce,
    };
    if (s.usePkce) {
      params.code_challenge = await client.calculatePKCECodeChallenge(codeVerifier);
      params.code_challenge_method = "S256";
    }
    return { url: client.buildAuthorizationUrl(config, params).href, state, nonce, codeVerifier };
  }

  /** The user the provider's answer (`callbackUrl`, as it arrived) vouches for; throws when anything does not hold. */
  async finish(
    key: string,
    s: OidcSettings,
    callbackUrl: URL,
    intent: { state: string; nonce: string; codeVerifier: string },
    /** Claims the answer carried besides the tokens (Apple's name in its form POST). */
    more: { extraClaims?: Record<string, unknown> } = {},
  ): Promise<ExternalUser> {
    const config = await this.configOf(key, s);
    const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
      expectedState: intent.state,
      expectedNonce: intent.nonce,
      idTokenExpected: true,
      ...(s.usePkce ? { pkceCodeVerifier: intent.codeVerifier } : {}),
    });
    const idClaims = tokens.claims();
    if (!idClaims || !tokens.id_token) throw new Error("the provider sent no ID token");
    // openid-client checked the ID token's claims (issuer, audience, times, nonce); its signature is checked here
    // against the provider's published keys (OIDC Core 3.1.3.7 would allow trusting TLS instead).
    const jwksUri = config.serverMetadata().jwks_uri;
    if (!jwksUri) throw new Error("the provider's metadata has no jwks_uri");
    await jwtVerify(tokens.id_token, this.keys.of(key, jwksUri), { algorithms: SIGNATURE_ALGORITHMS });
    const claims: Record<string, unknown> = s.isIdTokenMapping
      ? { ...more.extraClaims, ...idClaims }
      : { ...more.extraClaims, ...idClaims, ...(await client.fetchUserInfo(config, tokens.access_token, idClaims.sub)) };
    return { ...externalUserOf(s.mapClaims ? s.mapClaims(claims) : claims), tokens: { accessToken: tokens.access_token, idToken: tokens.id_token } };
  }
}

/** The standard claims (OpenID Connect Core 5.1) as the account's fields. */
export function externalUserOf(claims: Record<string, unknown>): ExternalUser {
  const text = (k: string) => (typeof claims[k] === "string" && claims[k] ? (claims[k] as string) : undefined);
  return {
    id: String(claims.sub),
    username: text("preferred_username"),
    email: text("email"),
    emailVerified: claims.email_verified === true || claims.email_verified === "true",
    givenName: text("given_name"),
    familyName: text("family_name"),
    displayName: text("name"),
    preferredLanguage: text("locale"),
    raw: claims,
  };
}
