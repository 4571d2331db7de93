import { randomBytes } from "node:crypto";
import { jwtVerify } from "jose";
import { externalUserOf } from "./oidc.js";
import type { ExternalUser, Fetch, RedirectStart } from "./provider.js";
import { RemoteKeySets, SIGNATURE_ALGORITHMS } from "./remote-keys.js";

/**
 * Sign-in with a JWT an existing system already issued (kind `jwt`, as ZITADEL's JWT IdP): the browser is sent to
 * `jwt_endpoint`, a path of a reverse proxy in front of this server that holds the user's session there; the proxy
 * forwards the request to the callback (`/idps/callback`, the query kept) with the JWT in `header_name`. The JWT
 * must be signed by a key of `keys_endpoint` (fetched through the outbound policy, kept, and fetched again for an
 * unknown `kid`), issued by `issuer`, and unexpired; its claims are the user, as an ID token's.
 */
export interface JwtSettings {
  issuer: string;
  jwtEndpoint: string;
  keysEndpoint: string;
  headerName: string;
}

/** How long a JWT may have been issued in the future or expired ago (clocks differ). */
const CLOCK_TOLERANCE_S = 60;

export class JwtFederation {
  private readonly keys: RemoteKeySets;

  constructor(
    fetch: Fetch,
    /** SVC_IDP_INSECURE_HTTP: http:// endpoints are allowed (else refused before anything is sent). */
    private readonly options: { insecureHttp: boolean },
  ) {
    this.keys = new RemoteKeySets(fetch);
  }

  private checkScheme(s: JwtSettings) {
    const http = [s.jwtEndpoint, s.keysEndpoint].some((u) => new URL(u).protocol === "http:");
    if (http && !this.options.insecureHttp) throw new Error("an endpoint is http://, and SVC_IDP_INSECURE_HTTP is off");
  }

  start(s: JwtSettings, redirectUri: string): RedirectStart {
    this.checkScheme(s);
    const state = randomBytes(32).toString("base64url");
    const url = new URL(s.jwtEndpoint);
    url.searchParams.set("state", state);
    // Where the proxy forwards to, for one that serves several servers (ZITADEL's proxies read authRequestID).
    url.searchParams.set("redirect_uri", redirectUri);
    url.searchParams.set("authRequestID", state);
    return { url: url.href, state, nonce: "", codeVerifier: "" };
  }

  /** The user of the JWT the proxy put in `header_name` (a "Bearer " prefix allowed); throws when it does not hold. */
  async finish(key: string, s: JwtSettings, headers: Record<string, string | string[] | undefined>): Promise<ExternalUser> {
    this.checkScheme(s);
    const raw = headers[s.headerName.toLowerCase()];
    const value = (Array.isArray(raw) ? raw[0] : raw)?.replace(/^Bearer\s+/i, "").trim();
    if (!value) throw new Error(`no JWT in the ${s.headerName} header`);
    const { payload } = await jwtVerify(value, this.keys.of(key, s.keysEndpoint), {
      issuer: s.issuer,
      requiredClaims: ["sub", "exp"],
      clockTolerance: CLOCK_TOLERANCE_S,
      algorithms: SIGNATURE_ALGORITHMS,
    });
    return { ...externalUserOf(payload as Record<string, unknown>), tokens: { idToken: value } };
  }
}
