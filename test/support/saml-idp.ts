import { newSigningCertificate } from "../../src/crypto/signing-certificate.js";
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { inflateRawSync } from "node:zlib";
import { DOMParser, XMLSerializer } from "@xmldom/xmldom";
import { SignedXml } from "xml-crypto";

/**
 * An external SAML 2.0 identity provider for sign-in tests, on its own loopback port: it answers AuthnRequests
 * (HTTP-Redirect and HTTP-POST bindings) at /sso with an HTTP-POST-binding form carrying a Response for the
 * user set with `setUser` (no login form), signed with an RSA key generated for it (RSA-SHA256, SHA-256 digests,
 * exclusive c14n, enveloped signatures, the certificate in KeyInfo), and serves its metadata at /metadata.
 * The responses are built and signed here (xml-crypto), so that tests can also ask for broken ones
 * (`SamlVariant`).
 */
export type SamlVariant =
  /** The Response signed, and the assertion in it signed. */
  | "valid"
  /** Only the assertion signed. */
  | "assertion-signed-only"
  /** Nothing signed. */
  | "unsigned"
  /**
   * XML signature wrapping: the genuine signed assertion moved into the Response's samlp:Extensions (its signature
   * still verifies), and an unsigned assertion for another user (NameID `EVIL_NAME_ID`, attribute email the same)
   * where an SP reads the assertion, as the Response's child. The Response is not signed.
   */
  | "wrapped"
  /** The assertion signed, then its ds:Signature moved out of it, to the Response (after its Issuer). The Response is not signed. */
  | "moved-signature"
  /** Both signed, but the AudienceRestriction names another SP (`FOREIGN_AUDIENCE`). */
  | "foreign-audience"
  /** Both signed, issued an hour ago and NotOnOrAfter (Conditions and SubjectConfirmationData) 55 minutes ago. */
  | "expired"
  /** Both signed, InResponseTo (Response and SubjectConfirmationData) naming another request. */
  | "wrong-in-response-to";

export interface SamlIdpRequest {
  id: string;
  acsUrl: string;
  issuer: string;
  binding: "redirect" | "post";
  /** Redirect binding: a Signature parameter was sent; POST binding: the AuthnRequest holds a ds:Signature. Not verified. */
  signed: boolean;
  relayState: string | undefined;
}

export interface SamlIdp {
  /** http://127.0.0.1:<port>/metadata */
  entityId: string;
  /** http://127.0.0.1:<port>/sso (HTTP-Redirect and HTTP-POST bindings). */
  ssoUrl: string;
  /** http://127.0.0.1:<port>/metadata */
  metadataUrl: string;
  /** EntityDescriptor with an IDPSSODescriptor: signing KeyDescriptor, NameIDFormats, SingleSignOnService for both bindings. */
  metadataXml: string;
  /** The signing certificate (PEM). */
  certPem: string;
  /** The user the IdP's /sso signs in for the next browser request (no login form): NameID plus attributes. */
  setUser(u: { nameId: string; attributes?: Record<string, string> }): void;
  /** The variant the /sso endpoint answers with (default "valid"). */
  setVariant(v: SamlVariant): void;
  /** Whether the /sso page submits its form by itself (default on); off, a test clicks `#saml-continue`. */
  setAutoSubmit(on: boolean): void;
  /** Requests the IdP received: the parsed AuthnRequest's ID, AssertionConsumerServiceURL, Issuer, binding, whether it was signed, RelayState. */
  requests: SamlIdpRequest[];
  /** Builds a base64 SAMLResponse directly (for tests that POST to the SP's ACS without a browser). */
  response(o: { acsUrl: string; audience: string; inResponseTo: string; nameId: string; attributes?: Record<string, string>; variant?: SamlVariant }): string;
  close(): Promise<void>;
}

/** The NameID of the unsigned assertion that the "wrapped" variant puts where an SP reads it. */
export const EVIL_NAME_ID = "attacker@evil.example";
/** The audience of the "foreign-audience" variant. */
export const FOREIGN_AUDIENCE = "http://other-sp.example/metadata";

const NS = {
  samlp: "urn:oasis:names:tc:SAML:2.0:protocol",
  saml: "urn:oasis:names:tc:SAML:2.0:assertion",
  md: "urn:oasis:names:tc:SAML:2.0:metadata",
  ds: "http://www.w3.org/2000/09/xmldsig#",
};
const NAMEID_EMAIL = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress";
const NAMEID_PERSISTENT = "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent";

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
const newId = () => `_${randomBytes(20).toString("hex")}`;
const iso = (ms: number) => new Date(ms).toISOString();

function parseXml(xml: string): Document {
  const fail = (m: unknown) => {
    throw new Error(`malformed XML: ${String(m)}`);
  };
  return new DOMParser({ errorHandler: { warning: () => {}, error: fail, fatalError: fail } }).parseFromString(xml, "text/xml");
}

async function generateKeyAndCert(): Promise<{ keyPem: string; certPem: string }> {
  const made = await newSigningCertificate("saml-idp.test", new Date());
  return { keyPem: made.privateKeyPem, certPem: made.certificatePem };
}

/** Signs the element `/*[local-name()=<root>]` (which holds an ID) of `xml`, the signature placed right after its Issuer. */
function sign(xml: string, root: "Assertion" | "Response", keyPem: string, certPem: string): string {
  const sig = new SignedXml({
    privateKey: keyPem,
    publicCert: certPem,
    signatureAlgorithm: "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
    canonicalizationAlgorithm: "http://www.w3.org/2001/10/xml-exc-c14n#",
  });
  sig.addReference({
    xpath: `/*[local-name(.)='${root}']`,
    transforms: ["http://www.w3.org/2000/09/xmldsig#enveloped-signature", "http://www.w3.org/2001/10/xml-exc-c14n#"],
    digestAlgorithm: "http://www.w3.org/2001/04/xmlenc#sha256",
  });
  sig.computeSignature(xml, { prefix: "ds", location: { reference: `/*[local-name(.)='${root}']/*[local-name(.)='Issuer']`, action: "after" } });
  return sig.getSignedXml();
}

interface AssertionParams {
  entityId: string;
  acsUrl: string;
  audience: string;
  inResponseTo: string;
  nameId: string;
  attributes: Record<string, string>;
  issuedAt: number;
  notOnOrAfter: number;
}

function assertionXml(id: string, p: AssertionParams): string {
  const format = p.nameId.includes("@") ? NAMEID_EMAIL : NAMEID_PERSISTENT;
  const attributes = Object.entries(p.attributes)
    .map(
      ([name, value]) =>
        `<saml:Attribute Name="${esc(name)}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic">` +
        `<saml:AttributeValue xsi:type="xs:string">${esc(value)}</saml:AttributeValue></saml:Attribute>`,
    )
    .join("");
  return (
    `<saml:Assertion xmlns:saml="${NS.saml}" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"` +
    ` ID="${id}" Version="2.0" IssueInstant="${iso(p.issuedAt)}">` +
    `<saml:Issuer>${esc(p.entityId)}</saml:Issuer>` +
    `<saml:Subject><saml:NameID Format="${format}">${esc(p.nameId)}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">` +
    `<saml:SubjectConfirmationData InResponseTo="${esc(p.inResponseTo)}" NotOnOrAfter="${iso(p.notOnOrAfter)}" Recipient="${esc(p.acsUrl)}"/>` +
    `</saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${iso(p.issuedAt - 60_000)}" NotOnOrAfter="${iso(p.notOnOrAfter)}">` +
    `<saml:AudienceRestriction><saml:Audience>${esc(p.audience)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${iso(p.issuedAt)}" SessionIndex="${newId()}">` +
    `<saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef>` +
    `</saml:AuthnContext></saml:AuthnStatement>` +
    (attributes ? `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>` : "") +
    `</saml:Assertion>`
  );
}

function responseXml(p: AssertionParams, body: { extensions?: string; assertion: string }): string {
  return (
    `<samlp:Response xmlns:samlp="${NS.samlp}" xmlns:saml="${NS.saml}" ID="${newId()}" Version="2.0" IssueInstant="${iso(p.issuedAt)}"` +
    ` Destination="${esc(p.acsUrl)}" InResponseTo="${esc(p.inResponseTo)}">` +
    `<saml:Issuer>${esc(p.entityId)}</saml:Issuer>` +
    (body.extensions ? `<samlp:Extensions>${body.extensions}</samlp:Extensions>` : "") +
    `<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>` +
    body.assertion +
    `</samlp:Response>`
  );
}

function buildResponse(
  keys: { keyPem: string; certPem: string },
  entityId: string,
  o: { acsUrl: string; audience: string; inResponseTo: string; nameId: string; attributes?: Record<string, string>; variant?: SamlVariant },
): string {
  const variant = o.variant ?? "valid";
  const now = Date.now();
  const p: AssertionParams = {
    entityId,
    acsUrl: o.acsUrl,
    audience: variant === "foreign-audience" ? FOREIGN_AUDIENCE : o.audience,
    inResponseTo: variant === "wrong-in-response-to" ? newId() : o.inResponseTo,
    nameId: o.nameId,
    attributes: o.attributes ?? {},
    issuedAt: variant === "expired" ? now - 60 * 60_000 : now,
    notOnOrAfter: variant === "expired" ? now - 55 * 60_000 : now + 5 * 60_000,
  };
  const signAssertion = (xml: string) => sign(xml, "Assertion", keys.keyPem, keys.certPem);
  const signResponse = (xml: string) => sign(xml, "Response", keys.keyPem, keys.certPem);
  let xml: string;
  switch (variant) {
    case "valid":
    case "foreign-audience":
    case "expired":
    case "wrong-in-response-to":
      xml = signResponse(responseXml(p, { assertion: signAssertion(assertionXml(newId(), p)) }));
      break;
    case "assertion-signed-only":
      xml = responseXml(p, { assertion: signAssertion(assertionXml(newId(), p)) });
      break;
    case "unsigned":
      xml = responseXml(p, { assertion: assertionXml(newId(), p) });
      break;
    case "wrapped": {
      const genuine = signAssertion(assertionXml(newId(), p));
      const evilAttributes = { ...p.attributes, ...("email" in p.attributes ? { email: EVIL_NAME_ID } : {}) };
      const evil = assertionXml(newId(), { ...p, nameId: EVIL_NAME_ID, attributes: evilAttributes });
      xml = responseXml(p, { extensions: genuine, assertion: evil });
      break;
    }
    case "moved-signature": {
      const doc = parseXml(responseXml(p, { assertion: signAssertion(assertionXml(newId(), p)) }));
      const response = doc.documentElement!;
      const assertion = response.getElementsByTagNameNS(NS.saml, "Assertion")[0]!;
      const signature = assertion.getElementsByTagNameNS(NS.ds, "Signature")[0]!;
      assertion.removeChild(signature);
      const responseIssuer = response.getElementsByTagNameNS(NS.saml, "Issuer")[0]!;
      response.insertBefore(signature, responseIssuer.nextSibling);
      xml = new XMLSerializer().serializeToString(doc);
      break;
    }
    default:
      throw new Error(`unknown SAML variant ${String(variant satisfies never)}`);
  }
  return Buffer.from(xml, "utf8").toString("base64");
}

function parseAuthnRequest(xml: string): { id: string; acsUrl: string; issuer: string; hasSignature: boolean } {
  const root = parseXml(xml).documentElement;
  if (!root || root.namespaceURI !== NS.samlp || root.localName !== "AuthnRequest") throw new Error("not a samlp:AuthnRequest");
  const id = root.getAttribute("ID");
  const acsUrl = root.getAttribute("AssertionConsumerServiceURL");
  if (!id) throw new Error("AuthnRequest without ID");
  if (!acsUrl) throw new Error("AuthnRequest without AssertionConsumerServiceURL (this IdP knows no SP metadata)");
  let issuer = "";
  let hasSignature = false;
  for (let n = root.firstChild; n; n = n.nextSibling) {
    const el = n as Element;
    if (n.nodeType !== 1) continue;
    if (el.namespaceURI === NS.saml && el.localName === "Issuer") issuer = (el.textContent ?? "").trim();
    if (el.namespaceURI === NS.ds && el.localName === "Signature") hasSignature = true;
  }
  if (!issuer) throw new Error("AuthnRequest without Issuer");
  return { id, acsUrl, issuer, hasSignature };
}

function formPage(acsUrl: string, samlResponse: string, relayState: string | undefined, autoSubmit: boolean): string {
  return (
    `<!doctype html>\n<html><head><meta charset="utf-8"><title>SAML IdP</title></head><body>\n` +
    `<form method="post" action="${esc(acsUrl)}">\n` +
    `<input type="hidden" name="SAMLResponse" value="${esc(samlResponse)}">\n` +
    (relayState === undefined ? "" : `<input type="hidden" name="RelayState" value="${esc(relayState)}">\n`) +
    `<button type="submit" id="saml-continue">Continue</button>\n</form>\n` +
    (autoSubmit ? `<script>document.forms[0].submit()</script>\n` : "") +
    `</body></html>\n`
  );
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 1_000_000) throw new Error("request body too large");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export async function startSamlIdp(): Promise<SamlIdp> {
  const keys = await generateKeyAndCert();
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const entityId = `${base}/metadata`;
  const ssoUrl = `${base}/sso`;
  const certBody = keys.certPem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, "").replace(/\s+/g, "");
  const metadataXml =
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<md:EntityDescriptor xmlns:md="${NS.md}" xmlns:ds="${NS.ds}" entityID="${esc(entityId)}">` +
    `<md:IDPSSODescriptor WantAuthnRequestsSigned="false" protocolSupportEnumeration="${NS.samlp}">` +
    `<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${certBody}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>` +
    `<md:NameIDFormat>${NAMEID_EMAIL}</md:NameIDFormat>` +
    `<md:NameIDFormat>${NAMEID_PERSISTENT}</md:NameIDFormat>` +
    `<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${esc(ssoUrl)}"/>` +
    `<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${esc(ssoUrl)}"/>` +
    `</md:IDPSSODescriptor></md:EntityDescriptor>\n`;

  let user: { nameId: string; attributes?: Record<string, string> } = {
    nameId: "saml.user@idp.example",
    attributes: { email: "saml.user@idp.example", givenName: "Saml", surname: "User" },
  };
  let variant: SamlVariant = "valid";
  let autoSubmit = true;
  const requests: SamlIdpRequest[] = [];

  const sso = async (req: http.IncomingMessage, url: URL): Promise<{ status: number; type: string; body: string }> => {
    let params: URLSearchParams;
    let binding: "redirect" | "post";
    if (req.method === "GET") {
      params = url.searchParams;
      binding = "redirect";
    } else if (req.method === "POST") {
      params = new URLSearchParams(await readBody(req));
      binding = "post";
    } else {
      return { status: 405, type: "text/plain", body: "method not allowed" };
    }
    const samlRequest = params.get("SAMLRequest");
    if (!samlRequest) return { status: 400, type: "text/plain", body: "missing SAMLRequest" };
    let parsed: ReturnType<typeof parseAuthnRequest>;
    try {
      const raw = Buffer.from(samlRequest, "base64");
      const xml = binding === "redirect" ? inflateRawSync(raw).toString("utf8") : raw.toString("utf8");
      parsed = parseAuthnRequest(xml);
    } catch (e) {
      return { status: 400, type: "text/plain", body: `bad SAMLRequest: ${(e as Error).message}` };
    }
    const relayState = params.get("RelayState") ?? undefined;
    requests.push({
      id: parsed.id,
      acsUrl: parsed.acsUrl,
      issuer: parsed.issuer,
      binding,
      signed: binding === "redirect" ? params.has("Signature") : parsed.hasSignature,
      relayState,
    });
    const samlResponse = buildResponse(keys, entityId, {
      acsUrl: parsed.acsUrl,
      audience: parsed.issuer,
      inResponseTo: parsed.id,
      nameId: user.nameId,
      attributes: user.attributes,
      variant,
    });
    return { status: 200, type: "text/html; charset=utf-8", body: formPage(parsed.acsUrl, samlResponse, relayState, autoSubmit) };
  };

  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? "/", base);
    const answer =
      url.pathname === "/sso"
        ? sso(req, url)
        : url.pathname === "/metadata" && req.method === "GET"
          ? Promise.resolve({ status: 200, type: "application/samlmetadata+xml", body: metadataXml })
          : Promise.resolve({ status: 404, type: "text/plain", body: "not found" });
    answer.then(
      (a) => res.writeHead(a.status, { "content-type": a.type, "cache-control": "no-store" }).end(a.body),
      (e: unknown) => res.writeHead(500, { "content-type": "text/plain" }).end(String(e)),
    );
  });

  return {
    entityId,
    ssoUrl,
    metadataUrl: entityId,
    metadataXml,
    certPem: keys.certPem,
    setUser: (u) => {
      user = u;
    },
    setVariant: (v) => {
      variant = v;
    },
    setAutoSubmit: (on) => {
      autoSubmit = on;
    },
    requests,
    response: (o) => buildResponse(keys, entityId, o),
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
