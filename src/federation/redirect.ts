import { errors as joseErrors } from "jose";
import { AuthorizationResponseError } from "openid-client";
import type { IdpKind } from "../domain/idps.js";
import { OAuthFederation } from "./oauth.js";
import type { SigningCertificate } from "../crypto/signing-certificate.js";
import { IDP_KINDS } from "../domain/idps.js";
import { JwtFederation } from "./jwt.js";
import { OidcFederation } from "./oidc.js";
import { SamlResponseRefused } from "./saml.js";
import { SamlRoundTrip } from "./saml-round-trip.js";
import { type Override, overrideOf, presetOf } from "./vendors.js";
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

/** The kinds whose provider answers by a form POST to the callback (`response_mode=form_post`): Apple. */
export const FORM_POST_KINDS: readonly IdpKind[] = ["apple"];

/** The kinds `RedirectProtocols.of` has a protocol for. */
export const REDIRECT_KINDS: readonly IdpKind[] = IDP_KINDS.filter((k) => k !== "ldap");

const text = (v: unknown): string => (typeof v === "string" ? v : "");

/**
 * The redirect protocols of every kind but LDAP: OpenID Connect (`oidc` and the vendors built on it), OAuth 2.0
 * (`oauth` and the vendors built on it; src/federation/vendors.ts), SAML 2.0 (`saml`, its response posted back
 * to the ACS) and JWT (`jwt`, a proxy brings the JWT to the callback).
 */
export class RedirectProtocols {
  private readonly oidc: OidcFederation;
  private readonly oauth: OAuthFederation;
  readonly saml: SamlRoundTrip;
  private readonly jwt: JwtFederation;

  private readonly override: Override;

  /**
   * `samlKeys`: a SAML provider's service-provider key pair (its secret, made at first use); `endpointOverrides`:
   * the vendors' fixed origins replaced (SVC_IDP_ENDPOINT_OVERRIDES).
   */
  constructor(
    fetch: Fetch,
    options: { insecureHttp: boolean; samlKeys: (p: StoredProvider) => Promise<SigningCertificate>; endpointOverrides?: Record<string, string> },
  ) {
    this.override = overrideOf(options.endpointOverrides ?? {});
    this.oidc = new OidcFederation(fetch, options);
    this.oauth = new OAuthFederation(fetch, options);
    this.saml = new SamlRoundTrip(fetch, options.samlKeys);
    this.jwt = new JwtFederation(fetch, options);
  }

  of(p: StoredProvider): RedirectProtocol | undefined {
    const c = p.config;
    const preset = presetOf(p, this.override);
    if (preset?.protocol === "oidc") {
      const s = preset.settings;
      return {
        start: (redirectUri) => this.oidc.start(p.key, s, redirectUri),
        // Apple answers by a form POST, kept with the round trip: its fields are the answer, its `user` the name.
        finish: (url, trip) => {
          // A held form answer counts only for a provider that answers so (FORM_POST_KINDS).
          if (!trip.posted || !FORM_POST_KINDS.includes(p.kind)) return this.oidc.finish(p.key, s, url, trip);
          const [answer, more] = formAnswer(url, trip.posted);
          return this.oidc.finish(p.key, s, answer, trip, more);
        },
      };
    }
    if (preset?.protocol === "oauth") {
      return { start: (redirectUri) => this.oauth.start(preset.settings, redirectUri), finish: (url, trip) => this.oauth.finish(preset.settings, url, trip) };
    }
    switch (p.kind) {
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

/**
 * A form POST answer (Apple's `response_mode=form_post`) as the callback URL the protocol reads, and the claims of
 * its `user` field (the name, sent on the first authorization only).
 */
function formAnswer(url: URL, posted: string): [URL, { extraClaims: Record<string, unknown> }] {
  const fields = JSON.parse(posted) as Record<string, string>;
  const answer = new URL(`${url.origin}${url.pathname}`);
  for (const [k, v] of Object.entries(fields)) if (k !== "user") answer.searchParams.set(k, v);
  let user: { name?: { firstName?: unknown; lastName?: unknown } } = {};
  try {
    user = JSON.parse(fields.user ?? "{}");
  } catch {
    // Not JSON: no name; the sign-in goes on without it.
  }
  const given = typeof user.name?.firstName === "string" ? user.name.firstName : undefined;
  const family = typeof user.name?.lastName === "string" ? user.name.lastName : undefined;
  return [answer, { extraClaims: { ...(given ? { given_name: given } : {}), ...(family ? { family_name: family } : {}) } }];
}

/** Whether the provider's answer was a refusal (the user cancelled there, or it said no, or its SAML response does not hold): the browser's request failed, not the server. */
export const refusedByProvider = (e: unknown): boolean =>
  e instanceof AuthorizationResponseError || e instanceof SamlResponseRefused || (e instanceof joseErrors.JOSEError && !(e instanceof joseErrors.JWKSTimeout));
