import { randomBytes, X509Certificate } from "node:crypto";
import { type Profile, SAML, type SamlConfig, ValidateInResponseTo } from "@node-saml/node-saml";
import { DOMParser } from "@xmldom/xmldom";
import type { ExternalUser, StoredProvider } from "./provider.js";

/**
 * Sign-in at a SAML 2.0 identity provider (kind `saml`), this server being the service provider, with
 * @node-saml/node-saml for what it does well (building AuthnRequests, signing them, verifying XML signatures and
 * taking the assertion only from the signed bytes) and checks of our own for what it leaves out at login:
 *
 * - node-saml does not compare a login assertion's Issuer with `idpIssuer` (only logout messages), nor the
 *   Response's Destination or the bearer SubjectConfirmationData's Recipient with the ACS URL: an assertion the
 *   IdP signed for another service provider's ACS would pass. Both are checked here (SAML Profiles 4.1.4.3).
 * - No request-ID cache lives in this process: the caller keeps the ID of the request it sent (the intent) and
 *   passes it back. node-saml is given, per response, a cache that knows that one ID (`validateInResponseTo:
 *   always`), and the signed SubjectConfirmationData's InResponseTo is compared with it here as well.
 * - A response is taken when the Response is signed or the assertion is (SAML Profiles 4.1.3.5: "each assertion
 *   MUST be protected by a digital signature … by signing each individual <Assertion> element or by signing the
 *   <Response> element"): see SIGNATURES.
 *
 * The one-time use of an assertion is the caller's: `finish` returns its ID and how long it is valid.
 */
export interface SamlSettings {
  /** The IdP's metadata (an EntityDescriptor, or an EntitiesDescriptor holding one with an IDPSSODescriptor). */
  metadataXml: string;
  /** How the AuthnRequest travels to the IdP; the answer always comes back by HTTP-POST to the ACS. */
  binding: "post" | "redirect";
  withSignedRequest: boolean;
  /** The NameID format asked for (a URN); undefined: none asked for, the IdP chooses. */
  nameIdFormat: string | undefined;
  /** Identifies the user instead of a transient NameID (which changes at every login). */
  transientMappingAttributeName: string | undefined;
}

/** The SP's own side: entity ID (= its metadata URL), ACS URL, and the signing key pair used for signed AuthnRequests and in the SP metadata. */
export interface ServiceProvider {
  entityId: string;
  acsUrl: string;
  privateKeyPem: string;
  certificatePem: string;
}

/**
 * How the browser is sent to the IdP. `post`: the caller renders a form to `action` with `fields` as hidden inputs
 * and a button (no script: the login UI's content security policy allows none inline). `requestId` is the
 * AuthnRequest's ID, which the caller keeps and passes to `finish`.
 */
export type SamlStart =
  | { kind: "redirect"; url: string; requestId: string }
  | { kind: "post"; action: string; fields: Record<string, string>; requestId: string };

/** A SAMLResponse that does not hold: its signature, its issuer, its audience, its recipient, its times or its request. */
export class SamlResponseRefused extends Error {}

/**
 * Which signatures a response needs. node-saml's `wantAuthnResponseSigned: false` and `wantAssertionsSigned:
 * false` together mean: a Response whose own signature verifies (covering the assertion in it, which is then read
 * from the signed bytes), or else an assertion whose signature verifies; neither signed is refused ("Invalid
 * signature"). `wantAssertionsSigned: true` would also refuse a signed Response around an unsigned assertion,
 * which is what Keycloak sends by default ("Sign documents" on, "Sign assertions" off), though the spec allows it.
 * The SP metadata still asks for signed assertions (WantAssertionsSigned="true").
 */
const SIGNATURES = { wantAuthnResponseSigned: false, wantAssertionsSigned: false } as const;

const NS = {
  md: "urn:oasis:names:tc:SAML:2.0:metadata",
  ds: "http://www.w3.org/2000/09/xmldsig#",
  samlp: "urn:oasis:names:tc:SAML:2.0:protocol",
  saml: "urn:oasis:names:tc:SAML:2.0:assertion",
};
const BINDING = {
  redirect: "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect",
  post: "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST",
};
const NAMEID_FORMAT = {
  emailAddress: "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
  persistent: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent",
  transient: "urn:oasis:names:tc:SAML:2.0:nameid-format:transient",
  unspecified: "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified",
};
const STATUS_SUCCESS = "urn:oasis:names:tc:SAML:2.0:status:Success";
const BEARER = "urn:oasis:names:tc:SAML:2.0:cm:bearer";

/** The SAMLConfig.name_id_format values (proto JSON names, or numbers) as URNs; not set: persistent (as the proto says). */
const NAME_ID_FORMATS: Record<string, string> = {
  SAML_NAME_ID_FORMAT_UNSPECIFIED: NAMEID_FORMAT.persistent,
  SAML_NAME_ID_FORMAT_EMAIL_ADDRESS: NAMEID_FORMAT.emailAddress,
  SAML_NAME_ID_FORMAT_PERSISTENT: NAMEID_FORMAT.persistent,
  SAML_NAME_ID_FORMAT_TRANSIENT: NAMEID_FORMAT.transient,
  SAML_NAME_ID_FORMAT_UNSPECIFIED_FORMAT: NAMEID_FORMAT.unspecified,
  0: NAMEID_FORMAT.persistent,
  1: NAMEID_FORMAT.emailAddress,
  2: NAMEID_FORMAT.persistent,
  3: NAMEID_FORMAT.transient,
  4: NAMEID_FORMAT.unspecified,
};

/** A base64 SAMLResponse larger than this is refused before it is decoded. */
const MAX_RESPONSE_CHARS = 1_000_000;

/**
 * The settings of a stored `saml` provider (its configuration as proto JSON). `fetchedMetadata`: the text read from
 * `metadataUrl`, when the configuration names one instead of holding the XML. The binding left unspecified is
 * redirect when the metadata offers it, else POST. Throws when there is no metadata or it is not an IdP's.
 */
export function samlSettingsOf(p: StoredProvider, fetchedMetadata?: string): SamlSettings {
  const c = p.config;
  const text = (v: unknown) => (typeof v === "string" ? v : "");
  const metadataXml = text(c.metadataXml) || (text(c.metadataUrl) ? (fetchedMetadata ?? "") : "");
  if (!metadataXml) throw new Error(text(c.metadataUrl) ? "the IdP's metadata (metadata_url) has not been fetched" : "the provider has no IdP metadata");
  const binding =
    c.binding === "SAML_BINDING_POST" || c.binding === 1
      ? "post"
      : c.binding === "SAML_BINDING_REDIRECT" || c.binding === 2
        ? "redirect"
        : idpMetadataOf(metadataXml).sso.redirect
          ? "redirect"
          : "post";
  return {
    metadataXml,
    binding,
    withSignedRequest: c.withSignedRequest === true,
    nameIdFormat: NAME_ID_FORMATS[String(c.nameIdFormat ?? 0)] ?? NAMEID_FORMAT.persistent,
    transientMappingAttributeName: text(c.transientMappingAttributeName) || undefined,
  };
}

export class SamlFederation {
  private readonly clockSkewMs: number;
  private readonly now: () => number;

  /** `clockSkewMs`: how far the IdP's clock may be off (default a minute); `now`: the clock our own time checks use. */
  constructor(options: { clockSkewMs?: number; now?: () => number } = {}) {
    this.clockSkewMs = options.clockSkewMs ?? 60_000;
    // node-saml turns every time check off at -1: never that, nor anything not a plain number of milliseconds.
    if (!Number.isFinite(this.clockSkewMs) || this.clockSkewMs < 0) throw new Error("clockSkewMs must be a non-negative number");
    this.now = options.now ?? Date.now;
  }

  /** The AuthnRequest for the IdP in the binding of `s`: a URL to redirect to, or a form to post. */
  async start(s: SamlSettings, sp: ServiceProvider, relayState: string): Promise<SamlStart> {
    // HTTP-Redirect signs the query as node-saml encodes it (querystring), and the URL carries it as URLSearchParams
    // encodes it: the two agree on these characters only. 80 bytes: SAML Bindings 3.4.3.
    if (!/^[A-Za-z0-9_.-]{0,80}$/.test(relayState)) throw new Error("the relay state must be at most 80 of A-Z a-z 0-9 _ . -");
    const idp = idpMetadataOf(s.metadataXml);
    const entryPoint = idp.sso[s.binding];
    if (!entryPoint) throw new Error(`the IdP's metadata has no SingleSignOnService for ${BINDING[s.binding]}`);
    const requestId = `_${randomBytes(20).toString("hex")}`;
    const saml = new SAML({
      ...baseOptions(sp, idp, this.clockSkewMs),
      entryPoint,
      generateUniqueId: () => requestId,
      identifierFormat: s.nameIdFormat ?? null,
      // No RequestedAuthnContext: node-saml asks for PasswordProtectedTransport, exactly, by default, which IdPs
      // refuse once the user signed in another way (a passkey, MFA). How the user signs in is the IdP's affair.
      disableRequestedAuthnContext: true,
      // HTTP-POST carries the request as base64 of the XML; node-saml would deflate it as for HTTP-Redirect.
      skipRequestCompression: s.binding === "post",
      ...(s.withSignedRequest ? { privateKey: sp.privateKeyPem, publicCert: sp.certificatePem, signatureAlgorithm: "sha256", digestAlgorithm: "sha256" } : {}),
    });
    if (s.binding === "redirect") {
      // Signed (withSignedRequest): SigAlg and Signature query parameters over SAMLRequest, RelayState, SigAlg.
      return { kind: "redirect", url: await saml.getAuthorizeUrlAsync(relayState, undefined, {}), requestId };
    }
    // Signed: an enveloped ds:Signature in the AuthnRequest, after its Issuer. Not getAuthorizeFormAsync: its HTML
    // submits itself with inline script.
    const message = await saml.getAuthorizeMessageAsync(relayState);
    const fields: Record<string, string> = {};
    for (const [k, v] of Object.entries(message)) if (typeof v === "string") fields[k] = v;
    return { kind: "post", action: entryPoint, fields, requestId };
  }

  /** Validates a POSTed SAMLResponse (base64) for the request `expectedRequestId`; returns the user and the assertion's ID and expiry (for one-time use, which the caller records). Throws on anything that does not hold. */
  async finish(
    s: SamlSettings,
    sp: ServiceProvider,
    samlResponse: string,
    expectedRequestId: string,
  ): Promise<{ user: ExternalUser; assertionId: string; notOnOrAfter: number }> {
    const idp = idpMetadataOf(s.metadataXml);
    if (!expectedRequestId) throw new SamlResponseRefused("no request to answer (an IdP-initiated response is not taken)");
    if (!samlResponse || samlResponse.length > MAX_RESPONSE_CHARS || !/^[A-Za-z0-9+/=\s]+$/.test(samlResponse)) {
      throw new SamlResponseRefused("the SAMLResponse is not base64, or too long");
    }
    const saml = new SAML({
      ...baseOptions(sp, idp, this.clockSkewMs),
      ...SIGNATURES,
      validateInResponseTo: ValidateInResponseTo.always,
      cacheProvider: onlyRequest(expectedRequestId),
    });
    let profile: Profile | null;
    try {
      ({ profile } = await saml.validatePostResponseAsync({ SAMLResponse: samlResponse }));
    } catch (e) {
      throw new SamlResponseRefused(`the SAML response was refused: ${(e as Error).message}`);
    }
    if (!profile?.getAssertionXml) throw new SamlResponseRefused("the SAML response holds no login assertion");
    checkResponse(Buffer.from(samlResponse, "base64").toString("utf8"), idp, sp, expectedRequestId);
    // node-saml gives the assertion as it was signed (from the verified bytes): what is read below is only that.
    const assertion = checkAssertion(profile.getAssertionXml(), idp, sp, expectedRequestId, this.now(), this.clockSkewMs);
    return { user: externalUserOf(s, profile), assertionId: assertion.id, notOnOrAfter: assertion.notOnOrAfter };
  }

  /** The SP metadata XML (EntityDescriptor with SPSSODescriptor, AuthnRequestsSigned=withSignedRequest, WantAssertionsSigned=true, the signing certificate, the ACS with HTTP-POST binding). */
  metadata(s: SamlSettings, sp: ServiceProvider): string {
    // Written here rather than by node-saml's generator, which lists the certificate only with AuthnRequestsSigned
    // true: an IdP may also want it while requests are not signed (to switch to signed ones without a re-import).
    const cert = certificateBody(sp.certificatePem);
    return (
      `<?xml version="1.0" encoding="UTF-8"?>\n` +
      `<md:EntityDescriptor xmlns:md="${NS.md}" xmlns:ds="${NS.ds}" entityID="${esc(sp.entityId)}">\n` +
      `  <md:SPSSODescriptor AuthnRequestsSigned="${s.withSignedRequest}" WantAssertionsSigned="true" protocolSupportEnumeration="${NS.samlp}">\n` +
      `    <md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${cert}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>\n` +
      (s.nameIdFormat ? `    <md:NameIDFormat>${esc(s.nameIdFormat)}</md:NameIDFormat>\n` : "") +
      `    <md:AssertionConsumerService Binding="${BINDING.post}" Location="${esc(sp.acsUrl)}" index="0" isDefault="true"/>\n` +
      `  </md:SPSSODescriptor>\n` +
      `</md:EntityDescriptor>\n`
    );
  }
}

/** What the IdP's metadata says: its entity ID (the issuer of its assertions), its SSO endpoints, its signing certificates. */
interface IdpMetadata {
  entityId: string;
  sso: { redirect?: string; post?: string };
  certs: string[];
}

function idpMetadataOf(xml: string): IdpMetadata {
  const doc = parseXml(xml, "the IdP's metadata");
  const descriptors = Array.from(doc.getElementsByTagNameNS(NS.md, "IDPSSODescriptor")).filter((d) =>
    (d.getAttribute("protocolSupportEnumeration") ?? "").split(/\s+/).includes(NS.samlp),
  );
  const idp = descriptors[0];
  if (!idp) throw new Error("the IdP's metadata has no SAML 2.0 IDPSSODescriptor");
  const entity = idp.parentNode as Element | null;
  const entityId = entity?.namespaceURI === NS.md && entity.localName === "EntityDescriptor" ? entity.getAttribute("entityID") : null;
  if (!entityId) throw new Error("the IdP's metadata has no entityID");
  const sso: IdpMetadata["sso"] = {};
  for (const e of childrenOf(idp, NS.md, "SingleSignOnService")) {
    const binding = e.getAttribute("Binding");
    const location = e.getAttribute("Location");
    if (!location) continue;
    if (binding === BINDING.redirect) sso.redirect ??= location;
    if (binding === BINDING.post) sso.post ??= location;
  }
  const certs = childrenOf(idp, NS.md, "KeyDescriptor")
    .filter((k) => !k.getAttribute("use") || k.getAttribute("use") === "signing")
    .flatMap((k) => Array.from(k.getElementsByTagNameNS(NS.ds, "X509Certificate")))
    .map((c) => pemOf((c.textContent ?? "").replace(/\s+/g, "")));
  if (!certs.length) throw new Error("the IdP's metadata has no signing certificate");
  return { entityId, sso, certs };
}

/** The options every use of node-saml shares: who we are, whom we trust, how far clocks may differ. */
function baseOptions(sp: ServiceProvider, idp: IdpMetadata, clockSkewMs: number): SamlConfig {
  return {
    issuer: sp.entityId,
    callbackUrl: sp.acsUrl,
    audience: sp.entityId,
    idpCert: idp.certs,
    // Compared by node-saml in logout messages only; for login, checkAssertion does.
    idpIssuer: idp.entityId,
    acceptedClockSkewMs: clockSkewMs,
  };
}

/** node-saml's request-ID cache, for one response: it knows the one request the caller sent, and forgets nothing. */
function onlyRequest(requestId: string) {
  const createdAt = new Date().toISOString();
  return {
    saveAsync: async () => null,
    getAsync: async (key: string) => (key === requestId ? createdAt : null),
    removeAsync: async () => null,
  };
}

/** The Response around the assertion: from the IdP, to our ACS, answering our request, a success. Not all of it is signed; the assertion's own checks are what count. */
function checkResponse(xml: string, idp: IdpMetadata, sp: ServiceProvider, requestId: string): void {
  const root = parseXml(xml, "the SAML response").documentElement;
  if (root?.namespaceURI !== NS.samlp || root.localName !== "Response") throw new SamlResponseRefused("the SAML response is not a samlp:Response");
  const destination = root.getAttribute("Destination");
  if (destination && destination !== sp.acsUrl) throw new SamlResponseRefused(`the SAML response is for another destination (${destination})`);
  if (root.getAttribute("InResponseTo") !== requestId) throw new SamlResponseRefused("the SAML response answers another request (InResponseTo)");
  const issuer = childrenOf(root, NS.saml, "Issuer")[0];
  if (issuer && issuer.textContent?.trim() !== idp.entityId) throw new SamlResponseRefused("the SAML response is from another issuer");
  const status = childrenOf(root, NS.samlp, "Status")[0];
  const code = status && childrenOf(status, NS.samlp, "StatusCode")[0]?.getAttribute("Value");
  if (code !== STATUS_SUCCESS) throw new SamlResponseRefused(`the SAML response's status is not success (${code ?? "none"})`);
}

/**
 * The signed assertion: issued by the IdP of the metadata, with a bearer SubjectConfirmationData for our ACS
 * (Recipient) and our request (InResponseTo), neither it nor the Conditions expired at `now` (node-saml checks
 * the times against the system clock too). Its ID and the earliest NotOnOrAfter are what one-time use needs.
 */
function checkAssertion(
  xml: string,
  idp: IdpMetadata,
  sp: ServiceProvider,
  requestId: string,
  now: number,
  skewMs: number,
): { id: string; notOnOrAfter: number } {
  const assertion = parseXml(xml, "the SAML assertion").documentElement;
  if (assertion?.namespaceURI !== NS.saml || assertion.localName !== "Assertion") throw new SamlResponseRefused("the signed content is not a saml:Assertion");
  const id = assertion.getAttribute("ID");
  if (!id) throw new SamlResponseRefused("the SAML assertion has no ID");
  if (childrenOf(assertion, NS.saml, "Issuer")[0]?.textContent?.trim() !== idp.entityId) {
    throw new SamlResponseRefused(`the SAML assertion is not from the IdP's entity ID (${idp.entityId})`);
  }
  const subject = childrenOf(assertion, NS.saml, "Subject")[0];
  const confirmations = subject ? childrenOf(subject, NS.saml, "SubjectConfirmation").filter((c) => c.getAttribute("Method") === BEARER) : [];
  const data = confirmations.flatMap((c) => childrenOf(c, NS.saml, "SubjectConfirmationData"));
  const forUs = data.filter((d) => d.getAttribute("Recipient") === sp.acsUrl);
  if (!forUs.length) throw new SamlResponseRefused("the SAML assertion has no bearer confirmation for this ACS URL (Recipient)");
  const answering = forUs.filter((d) => d.getAttribute("InResponseTo") === requestId);
  if (!answering.length) throw new SamlResponseRefused("the SAML assertion answers another request (SubjectConfirmationData InResponseTo)");
  const current = answering.filter((d) => within(now, skewMs, d.getAttribute("NotBefore"), d.getAttribute("NotOnOrAfter"), true));
  const confirmation = current[0];
  if (!confirmation) throw new SamlResponseRefused("the SAML assertion's subject confirmation has expired");
  const conditions = childrenOf(assertion, NS.saml, "Conditions")[0];
  if (!conditions) throw new SamlResponseRefused("the SAML assertion has no Conditions");
  if (!within(now, skewMs, conditions.getAttribute("NotBefore"), conditions.getAttribute("NotOnOrAfter"), false)) {
    throw new SamlResponseRefused("the SAML assertion is not valid now (Conditions)");
  }
  const ends = [confirmation.getAttribute("NotOnOrAfter"), conditions.getAttribute("NotOnOrAfter")].filter((t): t is string => !!t).map(Date.parse);
  return { id, notOnOrAfter: Math.min(...ends) };
}

/** Whether `now` lies in [notBefore, notOnOrAfter) give or take the skew; `needsEnd`: a missing NotOnOrAfter does not do. */
function within(now: number, skewMs: number, notBefore: string | null, notOnOrAfter: string | null, needsEnd: boolean): boolean {
  if (notBefore && !(now + skewMs >= Date.parse(notBefore))) return false;
  if (!notOnOrAfter) return !needsEnd;
  return now - skewMs < Date.parse(notOnOrAfter);
}

/** An attribute's value as text: the first of several, nothing for a structured one. */
function textOf(v: unknown): string | undefined {
  const first = Array.isArray(v) ? v[0] : v;
  return typeof first === "string" && first.trim() ? first.trim() : undefined;
}

const CLAIMS = "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/";
/** Attribute names per field, compared without case: common names, the WS-Federation claims, the LDAP OIDs. */
const NAMES = {
  email: ["email", "mail", "emailaddress", `${CLAIMS}emailaddress`, "urn:oid:0.9.2342.19200300.100.1.3"],
  givenName: ["givenName", "firstName", `${CLAIMS}givenname`, "urn:oid:2.5.4.42"],
  familyName: ["surname", "sn", "lastName", `${CLAIMS}surname`, "urn:oid:2.5.4.4"],
  displayName: ["displayName", "name", "urn:oid:2.16.840.1.113730.3.1.241"],
  username: ["username", "uid", "urn:oid:0.9.2342.19200300.100.1.1"],
};

/**
 * The assertion's subject in the account's terms. The ID is the NameID; when the NameID is transient (so said by
 * the assertion or asked for in the settings) and `transientMappingAttributeName` is set, that attribute instead.
 * emailVerified is always false: an assertion states an address, never that anyone proved they own it.
 */
function externalUserOf(s: SamlSettings, profile: Profile): ExternalUser {
  const attributes = (profile.attributes ?? {}) as Record<string, unknown>;
  const lower = new Map(Object.entries(attributes).map(([k, v]) => [k.toLowerCase(), v]));
  const attr = (names: string[]) => names.map((n) => textOf(lower.get(n.toLowerCase()))).find((v) => v !== undefined);
  const nameId = profile.nameID;
  if (!nameId) throw new SamlResponseRefused("the SAML assertion has no NameID");
  const transient = profile.nameIDFormat === NAMEID_FORMAT.transient || s.nameIdFormat === NAMEID_FORMAT.transient;
  let id = nameId;
  if (transient && s.transientMappingAttributeName) {
    const mapped = textOf(lower.get(s.transientMappingAttributeName.toLowerCase()));
    if (!mapped) throw new SamlResponseRefused(`the SAML assertion has no attribute ${s.transientMappingAttributeName} (transient_mapping_attribute_name)`);
    id = mapped;
  }
  const email = attr(NAMES.email) ?? (profile.nameIDFormat === NAMEID_FORMAT.emailAddress ? nameId : undefined);
  return {
    id,
    // Never the e-mail: SAML vouches for no address, and a username is what auto-linking by username matches.
    username: attr(NAMES.username) ?? id,
    email,
    emailVerified: false,
    givenName: attr(NAMES.givenName),
    familyName: attr(NAMES.familyName),
    displayName: attr(NAMES.displayName),
    raw: {
      ...attributes,
      nameID: nameId,
      nameIDFormat: profile.nameIDFormat,
      issuer: profile.issuer,
      sessionIndex: profile.sessionIndex,
    },
  };
}

function parseXml(xml: string, what: string): Document {
  let problem: string | undefined;
  const doc = new DOMParser({
    errorHandler: { warning: () => {}, error: (m: string) => (problem ??= m), fatalError: (m: string) => (problem ??= m) },
  }).parseFromString(xml, "text/xml");
  if (problem || !doc?.documentElement) throw new Error(`${what} is not well-formed XML: ${problem ?? "no root element"}`);
  return doc;
}

function childrenOf(parent: Element, ns: string, localName: string): Element[] {
  const out: Element[] = [];
  for (let n = parent.firstChild; n; n = n.nextSibling) {
    const e = n as Element;
    if (n.nodeType === 1 && e.namespaceURI === ns && e.localName === localName) out.push(e);
  }
  return out;
}

/** A certificate's base64 (DER) as PEM, refused when it is not X.509. */
function pemOf(base64: string): string {
  try {
    new X509Certificate(Buffer.from(base64, "base64"));
  } catch {
    throw new Error("a signing certificate in the IdP's metadata is not a valid X.509 certificate");
  }
  return `-----BEGIN CERTIFICATE-----\n${base64.match(/.{1,64}/g)?.join("\n")}\n-----END CERTIFICATE-----\n`;
}

/** A PEM certificate's base64 body, checked to be X.509. */
function certificateBody(pem: string): string {
  const cert = new X509Certificate(pem);
  return cert.raw.toString("base64");
}

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
