/**
 * The `acr` of a sign-in, derived from its `amr` so that tokens and introspection never disagree with what was
 * used (docs/decisions.md): "urn:svc:acr:mfa" when two factors were proven (a second factor after the password,
 * or a passkey with user verification), else "urn:svc:acr:pwd".
 */
export const ACR_MFA = "urn:svc:acr:mfa";
export const ACR_PWD = "urn:svc:acr:pwd";

export function acrOf(amr: readonly string[] | undefined): string | undefined {
  if (!amr?.length) return undefined;
  return amr.includes("mfa") ? ACR_MFA : ACR_PWD;
}
