import { isOrgScope } from "../domain/org-scopes.js";
import { oauth } from "./errors.js";

/**
 * Scopes of OpenID Connect Core §5.4 and offline access. Not `address`: users have no postal address (the
 * specification's user fields name none), so it could never yield a claim; it is neither advertised nor granted
 * (dropped at authorize like any unknown scope, so the granted `scope` tells the client; RFC 6749 §3.3).
 */
export const standardScopes = ["openid", "profile", "email", "phone", "offline_access"];
/** `urn:svc:iam:org:project:id:<project id>:aud` puts the project into the token's audience. */
const PROJECT_AUDIENCE = /^urn:svc:iam:org:project:id:([A-Za-z0-9_-]{1,200}):aud$/;
/** The audience of this server's own APIs (scope `urn:svc:iam:org:project:id:svc:aud`). */
export const API_AUDIENCE = "svc";
/** The roles of the application's project, in the claim of the same name. */
export const ROLES_SCOPE = "urn:svc:iam:org:project:roles";
/** The user's metadata, in the claim of the same name: key -> base64url of the value (ZITADEL's shape). */
export const METADATA_SCOPE = "urn:svc:iam:user:metadata";

/** Space-separated scopes, each once; unknown ones are invalid_scope (token endpoint) or dropped (authorize). */
export function parseScopes(scope: string | undefined, unknown: "refuse" | "drop" = "refuse"): string[] {
  const out: string[] = [];
  for (const s of (scope ?? "").split(" ").filter(Boolean)) {
    const known = standardScopes.includes(s) || s === ROLES_SCOPE || s === METADATA_SCOPE || PROJECT_AUDIENCE.test(s) || isOrgScope(s);
    if (!known) {
      if (unknown === "refuse") throw oauth.invalidScope(`the scope "${s.slice(0, 100)}" is not known`);
      continue;
    }
    if (!out.includes(s)) out.push(s);
  }
  return out;
}

/** The audience: the given base (client ID, project) plus every project a scope asks for. */
export function audienceOf(scopes: string[], base: string[]): string[] {
  const aud = [...base];
  for (const s of scopes) {
    const m = PROJECT_AUDIENCE.exec(s);
    if (m && !aud.includes(m[1]!)) aud.push(m[1]!);
  }
  return aud;
}
