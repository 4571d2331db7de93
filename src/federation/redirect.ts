import { errors as joseErrors } from "jose";
import { AuthorizationResponseError } from "openid-client";
import type { IdpKind } from "../domain/idps.js";
import { OAuthFederation } from "./oauth.js";
import type { SigningCertificate } from "../crypto/signing-certificate.js";
import { JwtFederation } from "./jwt.js";
import { OidcFederation } from "./oidc.js";
import { SamlResponseRefused } from "./saml.js";
import { SamlRoundTrip } from "./saml-round-trip.js";
import type { ExternalUser, Fetch, RedirectStart, StoredProvider } from "./provider.js";

/** A provider the browser is sent to and comes back from: where to send it, and the user its answer vouches for. */
export interface RedirectProtocol {
  start(redirectUri: string): Promise<RedirectStart>;
  /**
   * `posted`: what the provider posted back (a SAML response at the ACS), kept with the round trip; `headers`: the
   * callback request's (a JWT a proxy added).
   */
  finish(callbackUrl: URL, intent: RoundTrip): Promise<ExternalUser>;
}

/** What the start of a round trip left for its callback, and what the callback brought. */
export interface RoundTrip {
  state: string;
  nonce: string;
  codeVerifier: string;
  posted?: string | undefined;
  headers?: Record<string, string | string[] | undefined>;
}

/** The kinds `RedirectProtocols.of` has a protocol for. */
export const REDIRECT_KINDS: readonly IdpKind[] = ["oidc", "gitlab_self_hosted", "oauth", "saml", "jwt"];

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
const text = (v: unknown): string => (typeof v === "string" ? v : "");

/**
 * The redirect protocols of the kinds this server signs in with: OpenID Connect (`oidc`, and GitLab self-hosted,
 * which is OIDC at its own issuer), OAuth 2.0 (`oauth`), SAML 2.0 (`saml`, its response posted back to the ACS) and
 * JWT (`jwt`, a proxy brings the JWT to the callback).
 * Undefined for a kind it does not sign in with yet.
 */
export class RedirectProtocols {
  private readonly oidc: OidcFederation;
  private readonly oauth: OAuthFederation;
  readonly saml: SamlRoundTrip;
  private readonly jwt: JwtFederation;

  /** `samlKeys`: a SAML provider's service-provider key pair (its secret, made at first use). */
  constructor(fetch: Fetch, options: { insecureHttp: boolean; samlKeys: (p: StoredProvider) => Promise<SigningCertificate> }) {
    this.oidc = new OidcFederation(fetch, options);
    this.oauth = new OAuthFederation(fetch, options);
    this.saml = new SamlRoundTrip(fetch, options.samlKeys);
    this.jwt = new JwtFederation(fetch, options);
  }

  of(p: StoredProvider): RedirectProtocol | undefined {
    const c = p.config;
    switch (p.kind) {
      case "oidc":
      case "gitlab_self_hosted": {
        const settings = {
          issuer: text(c.issuer),
          clientId: text(c.clientId),
          clientSecret: p.secret,
          // None configured: openid, profile and email (OidcFederation.start).
          scopes: strings(c.scopes),
          usePkce: p.kind === "gitlab_self_hosted" || c.usePkce === true,
          isIdTokenMapping: c.isIdTokenMapping === true,
        };
        return {
          start: (redirectUri) => this.oidc.start(p.key, settings, redirectUri),
          finish: (url, intent) => this.oidc.finish(p.key, settings, url, intent),
        };
      }
      case "oauth": {
        const settings = {
          authorizationEndpoint: text(c.authorizationEndpoint),
          tokenEndpoint: text(c.tokenEndpoint),
          userEndpoint: text(c.userEndpoint),
          clientId: text(c.clientId),
          clientSecret: p.secret,
          scopes: strings(c.scopes),
          idAttribute: text(c.idAttribute) || "id",
          usePkce: c.usePkce === true,
        };
        return { start: (redirectUri) => this.oauth.start(settings, redirectUri), finish: (url, intent) => this.oauth.finish(settings, url, intent) };
      }
      case "jwt": {
        const settings = { issuer: text(c.issuer), jwtEndpoint: text(c.jwtEndpoint), keysEndpoint: text(c.keysEndpoint), headerName: text(c.headerName) };
        return {
          start: async (redirectUri) => this.jwt.start(settings, redirectUri),
          finish: (_url, trip) => this.jwt.finish(p.key, settings, trip.headers ?? {}),
        };
      }
      case "saml":
        return { start: (redirectUri) => this.saml.start(p, redirectUri), finish: (url, intent) => this.saml.finish(p, url, intent) };
      default:
        return undefined;
    }
  }
}

/** Whether the provider's answer was a refusal (the user cancelled there, or it said no, or its SAML response does not hold): the browser's request failed, not the server. */
export const refusedByProvider = (e: unknown): boolean =>
  e instanceof AuthorizationResponseError || e instanceof SamlResponseRefused || (e instanceof joseErrors.JOSEError && !(e instanceof joseErrors.JWKSTimeout));
