import { createPrivateKey, sign } from "node:crypto";
import type { OAuthSettings } from "./oauth.js";
import type { OidcSettings } from "./oidc.js";
import type { StoredProvider } from "./provider.js";

/**
 * The vendor kinds as presets of the two protocols, with their known quirks (anchor notes, section 1.4):
 * - GitHub, GitHub Enterprise: OAuth 2.0; the numeric `id`, `login` the username, the e-mail from the e-mails API
 *   (the primary address, verified as GitHub says; the user endpoint's `email` is only what the user made public);
 * - GitLab.com, GitLab self-hosted, Google: OIDC at their issuers; GitLab rejects scopes it does not know, so the
 *   default is `openid profile email`; Google has no usernames, its e-mail is one;
 * - Azure AD: OAuth 2.0 at the tenant's endpoints, the user from Microsoft Graph; it sends no `email_verified`,
 *   so the provider's `email_verified` decides; `mail`, else `userPrincipalName`, is the address;
 * - Apple: OIDC whose client secret is an ES256 JWT signed with the provider's private key (made for each token
 *   request), whose answer is a form POST (`response_mode=form_post`), with the user's name in a `user` field
 *   of the first authorization only.
 * The fixed URLs go through `override` (SVC_IDP_ENDPOINT_OVERRIDES), for tests against local stand-ins.
 */
export type Preset = { protocol: "oidc"; settings: OidcSettings } | { protocol: "oauth"; settings: OAuthSettings };

/** Rewrites a fixed vendor URL whose origin an operator replaced (test stand-ins, mirrors). */
export type Override = (url: string) => string;

export function overrideOf(replacements: Record<string, string>): Override {
  return (url) => {
    const u = new URL(url);
    const to = replacements[u.origin];
    return to ? `${to}${u.pathname === "/" && !url.endsWith("/") ? "" : u.pathname}${u.search}` : url;
  };
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
const text = (v: unknown): string => (typeof v === "string" ? v : "");

const GITHUB = {
  authorization: "https://github.com/login/oauth/authorize",
  token: "https://github.com/login/oauth/access_token",
  user: "https://api.github.com/user",
};
const AZURE_LOGIN = "https://login.microsoftonline.com";
const AZURE_ME = "https://graph.microsoft.com/v1.0/me";
const APPLE_ISSUER = "https://appleid.apple.com";
const AZURE_TENANTS: Record<string, string> = {
  AZURE_AD_TENANT_TYPE_COMMON: "common",
  AZURE_AD_TENANT_TYPE_ORGANISATIONS: "organizations",
  AZURE_AD_TENANT_TYPE_CONSUMERS: "consumers",
};

/** GitHub's OAuth settings at its endpoints (GitHub.com's, or an Enterprise server's). */
function github(p: StoredProvider, endpoints: { authorization: string; token: string; user: string }): OAuthSettings {
  const scopes = strings(p.config.scopes);
  return {
    authorizationEndpoint: endpoints.authorization,
    tokenEndpoint: endpoints.token,
    userEndpoint: endpoints.user,
    emailsEndpoint: `${endpoints.user.replace(/\/$/, "")}/emails`,
    clientId: text(p.config.clientId),
    clientSecret: p.secret,
    scopes: scopes.length ? scopes : ["read:user", "user:email"],
    idAttribute: "id",
    usePkce: false,
  };
}

/** Apple's client secret: an ES256 JWT of the team for the client, an hour long, signed with the provider's key. */
export function appleClientSecret(p: { teamId: string; keyId: string; clientId: string; privateKey: string }, now: number): string {
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const iat = Math.floor(now / 1000);
  const input = `${b64({ alg: "ES256", kid: p.keyId })}.${b64({ iss: p.teamId, sub: p.clientId, aud: APPLE_ISSUER, iat, exp: iat + 3600 })}`;
  const signature = sign("sha256", Buffer.from(input), { key: createPrivateKey(p.privateKey), dsaEncoding: "ieee-p1363" });
  return `${input}.${signature.toString("base64url")}`;
}

/** The preset of a vendor kind (and of the two kinds the user configures whole), or undefined for another kind. */
export function presetOf(p: StoredProvider, override: Override): Preset | undefined {
  const c = p.config;
  const oidc = (issuer: string, more: Partial<OidcSettings> = {}): Preset => ({
    protocol: "oidc",
    settings: {
      issuer,
      clientId: text(c.clientId),
      clientSecret: p.secret,
      // None configured: openid, profile and email (OidcFederation.start), which GitLab and Google accept.
      scopes: strings(c.scopes),
      usePkce: true,
      isIdTokenMapping: false,
      ...more,
    },
  });
  switch (p.kind) {
    case "oidc":
      return oidc(text(c.issuer), { usePkce: c.usePkce === true, isIdTokenMapping: c.isIdTokenMapping === true });
    case "gitlab_self_hosted":
      return oidc(text(c.issuer));
    case "gitlab":
      return oidc(override("https://gitlab.com"));
    case "google":
      // The address is the username only when Google vouches for it: a username is what auto-linking by username
      // matches, and an unverified address must never link (the `sub` stands in otherwise).
      return oidc(override("https://accounts.google.com"), {
        mapClaims: (claims) => ({ ...claims, preferred_username: claims.email_verified === true ? claims.email : undefined }),
      });
    case "apple":
      return oidc(override(APPLE_ISSUER), {
        scopes: strings(c.scopes).length ? strings(c.scopes) : ["name", "email"],
        exactScopes: true,
        clientSecret: () =>
          appleClientSecret({ teamId: text(c.teamId), keyId: text(c.keyId), clientId: text(c.clientId), privateKey: p.secret ?? "" }, Date.now()),
        authorizationParams: { response_mode: "form_post" },
        // Apple's ID token has no name; the first authorization's form carries it (`user`, see RedirectProtocols).
        isIdTokenMapping: true,
      });
    case "oauth":
      return {
        protocol: "oauth",
        settings: {
          authorizationEndpoint: text(c.authorizationEndpoint),
          tokenEndpoint: text(c.tokenEndpoint),
          userEndpoint: text(c.userEndpoint),
          clientId: text(c.clientId),
          clientSecret: p.secret,
          scopes: strings(c.scopes),
          idAttribute: text(c.idAttribute) || "id",
          usePkce: c.usePkce === true,
        },
      };
    case "github":
      return {
        protocol: "oauth",
        settings: github(p, { authorization: override(GITHUB.authorization), token: override(GITHUB.token), user: override(GITHUB.user) }),
      };
    case "github_enterprise":
      return {
        protocol: "oauth",
        settings: github(p, { authorization: text(c.authorizationEndpoint), token: text(c.tokenEndpoint), user: text(c.userEndpoint) }),
      };
    case "azure_ad": {
      const tenant = (c.tenant ?? {}) as { tenantId?: string; tenantType?: string };
      const path = tenant.tenantId || AZURE_TENANTS[tenant.tenantType ?? ""] || "common";
      // Any tenant's administrator sets `mail` (the "nOAuth" takeover): the provider's email_verified vouches only
      // for the addresses of one tenant it names, and never for a userPrincipalName standing in for an address.
      const emailVerified = c.emailVerified === true && !!tenant.tenantId;
      return {
        protocol: "oauth",
        settings: {
          authorizationEndpoint: override(`${AZURE_LOGIN}/${path}/oauth2/v2.0/authorize`),
          tokenEndpoint: override(`${AZURE_LOGIN}/${path}/oauth2/v2.0/token`),
          userEndpoint: override(AZURE_ME),
          clientId: text(c.clientId),
          clientSecret: p.secret,
          scopes: strings(c.scopes),
          requiredScopes: ["openid", "profile", "email", "User.Read"],
          idAttribute: "id",
          usePkce: true,
          mapUser: (user) => ({
            ...user,
            preferred_username: user.userPrincipalName,
            email: user.mail || user.userPrincipalName,
            email_verified: emailVerified && !!user.mail,
            given_name: user.givenName,
            family_name: user.surname,
            name: user.displayName,
          }),
        },
      };
    }
    default:
      return undefined;
  }
}
