import * as client from "openid-client";
import type { ExternalUser, Fetch, RedirectStart } from "./provider.js";

/**
 * Sign-in at an OpenID Connect provider (kind `oidc`) with openid-client: discovery from the issuer, the
 * authorization code flow with PKCE (when `use_pkce`; the state and nonce always), the ID token verified against
 * the provider's keys (openid-client keeps them and fetches them again for an unknown `kid`), then userinfo
 * unless `is_id_token_mapping`. Every request goes through `fetch` (the outbound policy, src/net).
 */
export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string | undefined;
  scopes: string[];
  usePkce: boolean;
  isIdTokenMapping: boolean;
}

/** How long a provider's discovered metadata is reused before it is read again. */
const METADATA_TTL_MS = 10 * 60_000;

export class OidcFederation {
  private readonly configs = new Map<string, { at: number; config: Promise<client.Configuration> }>();

  constructor(
    private readonly fetch: Fetch,
    /** SVC_IDP_INSECURE_HTTP: an http:// issuer is allowed (else refused before anything is sent). */
    private readonly options: { insecureHttp: boolean },
  ) {}

  /** The provider's configuration, discovered once per provider version (`key`) and reused for a while. */
  private configOf(key: string, s: OidcSettings): Promise<client.Configuration> {
    const cached = this.configs.get(key);
    if (cached && Date.now() - cached.at < METADATA_TTL_MS) return cached.config;
    const http = new URL(s.issuer).protocol === "http:";
    if (http && !this.options.insecureHttp) return Promise.reject(new Error("the issuer is http://, and SVC_IDP_INSECURE_HTTP is off"));
    const config = client
      .discovery(new URL(s.issuer), s.clientId, undefined, s.clientSecret ? client.ClientSecretPost(s.clientSecret) : client.None(), {
        [client.customFetch]: this.fetch,
        ...(http ? { execute: [client.allowInsecureRequests] } : {}),
        timeout: 10,
      })
      .then((c) => {
        c[client.customFetch] = this.fetch;
        // The ID token's signature too, against the provider's published keys: openid-client checks only its
        // claims otherwise (they came straight from the token endpoint over TLS, OIDC Core 3.1.3.7 allows that).
        client.enableNonRepudiationChecks(c);
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
    const scopes = s.scopes.length ? [...new Set(["openid", ...s.scopes])] : ["openid", "profile", "email"];
    const params: Record<string, string> = {
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
  async finish(key: string, s: OidcSettings, callbackUrl: URL, intent: { state: string; nonce: string; codeVerifier: string }): Promise<ExternalUser> {
    const config = await this.configOf(key, s);
    const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
      expectedState: intent.state,
      expectedNonce: intent.nonce,
      idTokenExpected: true,
      ...(s.usePkce ? { pkceCodeVerifier: intent.codeVerifier } : {}),
    });
    const idClaims = tokens.claims();
    if (!idClaims) throw new Error("the provider sent no ID token");
    const claims: Record<string, unknown> = s.isIdTokenMapping
      ? { ...idClaims }
      : { ...idClaims, ...(await client.fetchUserInfo(config, tokens.access_token, idClaims.sub)) };
    return { ...externalUserOf(claims), tokens: { accessToken: tokens.access_token, idToken: tokens.id_token } };
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
