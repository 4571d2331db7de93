/**
 * Scopes that name the organisation an application wants its user from (ZITADEL's
 * `urn:zitadel:iam:org:id:{id}` and `urn:zitadel:iam:org:domain:primary:{domain}`): the login UI shows that
 * organisation's texts and branding, only its users may sign in, and tokens carry the claim of the same name.
 */
export const ORG_ID_CLAIM = "urn:svc:iam:org:id";
export const ORG_DOMAIN_CLAIM = "urn:svc:iam:org:domain:primary";
const ORG_ID = /^urn:svc:iam:org:id:([A-Za-z0-9_-]{1,200})$/;
const ORG_DOMAIN = /^urn:svc:iam:org:domain:primary:([a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?)$/;

export const isOrgScope = (scope: string) => ORG_ID.test(scope) || ORG_DOMAIN.test(scope);

/** The organisation the scopes name (the first such scope), by ID or by domain. */
export function requestedOrgOf(scopes: readonly string[]): { id: string } | { domain: string } | undefined {
  for (const s of scopes) {
    const id = ORG_ID.exec(s);
    if (id) return { id: id[1]! };
    const domain = ORG_DOMAIN.exec(s);
    if (domain) return { domain: domain[1]! };
  }
  return undefined;
}
