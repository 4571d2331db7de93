import { newSigningCertificate } from "../../src/crypto/signing-certificate.js";
import { verify } from "node:crypto";
import { inflateRawSync } from "node:zlib";
import { DOMParser } from "@xmldom/xmldom";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SignedXml } from "xml-crypto";
import type { StoredProvider } from "../../src/federation/provider.js";
import { SamlFederation, SamlResponseRefused, type SamlSettings, type ServiceProvider, samlSettingsOf } from "../../src/federation/saml.js";
import { EVIL_NAME_ID, type SamlIdp, type SamlVariant, startSamlIdp } from "../support/saml-idp.js";

/**
 * The SAML 2.0 service-provider protocol (src/federation/saml.ts) against the SAML IdP stand-in, without a server:
 * AuthnRequests in both bindings (signed or not) that the IdP parses, responses it signs (or breaks) validated by
 * `finish`, and the SP metadata.
 */
const MD = "urn:oasis:names:tc:SAML:2.0:metadata";
const DS = "http://www.w3.org/2000/09/xmldsig#";
const TRANSIENT = "urn:oasis:names:tc:SAML:2.0:nameid-format:transient";

let idp: SamlIdp;
let sp: ServiceProvider;
/** A key pair that is not the IdP's: to sign responses with, or to name in a metadata in place of the IdP's. */
let other: { keyPem: string; certPem: string };
const saml = new SamlFederation();

async function keyAndCert(cn: string): Promise<{ keyPem: string; certPem: string }> {
  const made = await newSigningCertificate(cn, new Date());
  return { keyPem: made.privateKeyPem, certPem: made.certificatePem };
}

const certBody = (pem: string) => pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, "").replace(/\s+/g, "");

const settings = (o: Partial<SamlSettings> = {}): SamlSettings => ({
  metadataXml: idp.metadataXml,
  binding: "redirect",
  withSignedRequest: false,
  nameIdFormat: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent",
  transientMappingAttributeName: undefined,
  ...o,
});

const stored = (config: Record<string, unknown>): StoredProvider => ({ id: "idp-1", kind: "saml", key: "k1", config, secret: undefined });

const parse = (xml: string) => new DOMParser().parseFromString(xml, "text/xml");

const ATTRIBUTES = { email: "ada@idp.example", givenName: "Ada", surname: "Lovelace", displayName: "Ada Lovelace", uid: "ada" };

/** A response of the stand-in for a request of ours (the ID is only remembered by the caller). */
const responseFor = (requestId: string, o: { variant?: SamlVariant; nameId?: string; attributes?: Record<string, string>; acsUrl?: string } = {}) =>
  idp.response({
    acsUrl: o.acsUrl ?? sp.acsUrl,
    audience: sp.entityId,
    inResponseTo: requestId,
    nameId: o.nameId ?? "ada-persistent-1",
    attributes: o.attributes ?? ATTRIBUTES,
    ...(o.variant ? { variant: o.variant } : {}),
  });

const REQUEST_ID = "_0123456789abcdef0123456789abcdef01234567";

/** A Response (as XML) signed with the `other` key (enveloped, RSA-SHA256, after its Issuer), as base64. */
function signedByOther(xml: string): string {
  const sig = new SignedXml({
    privateKey: other.keyPem,
    publicCert: other.certPem,
    signatureAlgorithm: "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
    canonicalizationAlgorithm: "http://www.w3.org/2001/10/xml-exc-c14n#",
  });
  sig.addReference({
    xpath: "/*[local-name(.)='Response']",
    transforms: ["http://www.w3.org/2000/09/xmldsig#enveloped-signature", "http://www.w3.org/2001/10/xml-exc-c14n#"],
    digestAlgorithm: "http://www.w3.org/2001/04/xmlenc#sha256",
  });
  sig.computeSignature(xml, { prefix: "ds", location: { reference: "/*[local-name(.)='Response']/*[local-name(.)='Issuer']", action: "after" } });
  return Buffer.from(sig.getSignedXml()).toString("base64");
}

/** The IdP's metadata naming the `other` certificate instead of its own. */
const otherMetadata = () => idp.metadataXml.replace(certBody(idp.certPem), certBody(other.certPem));

/** The stand-in's unsigned response for REQUEST_ID, changed by `edit`, then signed with the `other` key. */
function editedResponse(edit: (doc: Document) => void): string {
  const doc = parse(Buffer.from(responseFor(REQUEST_ID, { variant: "unsigned" }), "base64").toString("utf8"));
  edit(doc);
  return signedByOther(doc.toString());
}

const SAML_NS = "urn:oasis:names:tc:SAML:2.0:assertion";

beforeAll(async () => {
  idp = await startSamlIdp();
  const keys = await keyAndCert("saml-sp.test");
  other = await keyAndCert("someone-else.test");
  sp = {
    entityId: "http://sp.test/idps/123/saml/metadata",
    acsUrl: "http://sp.test/idps/123/saml/acs",
    privateKeyPem: keys.keyPem,
    certificatePem: keys.certPem,
  };
});

afterAll(async () => {
  await idp?.close();
});

describe("samlSettingsOf", () => {
  it("reads the stored configuration (proto JSON), the metadata from it or as fetched", () => {
    const s = samlSettingsOf(
      stored({
        metadataXml: idp.metadataXml,
        binding: "SAML_BINDING_POST",
        withSignedRequest: true,
        nameIdFormat: "SAML_NAME_ID_FORMAT_TRANSIENT",
        transientMappingAttributeName: "employeeId",
      }),
    );
    expect(s).toEqual({
      metadataXml: idp.metadataXml,
      binding: "post",
      withSignedRequest: true,
      nameIdFormat: TRANSIENT,
      transientMappingAttributeName: "employeeId",
    });
    const fetched = samlSettingsOf(stored({ metadataUrl: idp.metadataUrl, binding: "SAML_BINDING_REDIRECT" }), idp.metadataXml);
    expect(fetched).toMatchObject({ metadataXml: idp.metadataXml, binding: "redirect", withSignedRequest: false, transientMappingAttributeName: undefined });
    // Not set: persistent (the proto's word); the binding unspecified: redirect, which the metadata offers.
    expect(fetched.nameIdFormat).toBe("urn:oasis:names:tc:SAML:2.0:nameid-format:persistent");
    expect(samlSettingsOf(stored({ metadataXml: idp.metadataXml })).binding).toBe("redirect");
    const postOnly = idp.metadataXml.replace(/<md:SingleSignOnService Binding="[^"]*HTTP-Redirect"[^>]*\/>/, "");
    expect(samlSettingsOf(stored({ metadataXml: postOnly })).binding).toBe("post");
    expect(samlSettingsOf(stored({ metadataXml: idp.metadataXml, nameIdFormat: "SAML_NAME_ID_FORMAT_EMAIL_ADDRESS" })).nameIdFormat).toBe(
      "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
    );
    expect(() => samlSettingsOf(stored({ metadataUrl: idp.metadataUrl }))).toThrow(/not been fetched/);
  });
});

describe("start", () => {
  it("redirect: a URL at the IdP's /sso whose AuthnRequest the IdP takes (our ID, ACS, issuer)", async () => {
    const start = await saml.start(settings(), sp, "relay-1");
    if (start.kind !== "redirect") throw new Error("expected a redirect");
    expect(start.url.startsWith(`${idp.ssoUrl}?`)).toBe(true);
    const url = new URL(start.url);
    expect(url.searchParams.get("RelayState")).toBe("relay-1");
    expect(url.searchParams.has("Signature")).toBe(false);
    const xml = inflateRawSync(Buffer.from(url.searchParams.get("SAMLRequest")!, "base64")).toString("utf8");
    const request = parse(xml).documentElement!;
    expect(request.getAttribute("ID")).toBe(start.requestId);
    expect(request.getAttribute("Destination")).toBe(idp.ssoUrl);
    expect(request.getElementsByTagNameNS("urn:oasis:names:tc:SAML:2.0:protocol", "NameIDPolicy")[0]!.getAttribute("Format")).toBe(
      "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent",
    );
    // No RequestedAuthnContext: how the user signs in is the IdP's affair.
    expect(xml).not.toContain("RequestedAuthnContext");

    const r = await fetch(start.url);
    expect(r.status, await r.clone().text()).toBe(200);
    expect(idp.requests.at(-1)).toEqual({
      id: start.requestId,
      acsUrl: sp.acsUrl,
      issuer: sp.entityId,
      binding: "redirect",
      signed: false,
      relayState: "relay-1",
    });
    // Two starts, two IDs.
    expect((await saml.start(settings(), sp, "relay-1")).requestId).not.toBe(start.requestId);
  });

  it("redirect, withSignedRequest: SigAlg and a Signature over the query as sent, with the SP's key", async () => {
    const start = await saml.start(settings({ withSignedRequest: true }), sp, "relay-2");
    if (start.kind !== "redirect") throw new Error("expected a redirect");
    const url = new URL(start.url);
    expect(url.searchParams.get("SigAlg")).toBe("http://www.w3.org/2001/04/xmldsig-more#rsa-sha256");
    // SAML Bindings 3.4.4.1: the signature is over SAMLRequest=…&RelayState=…&SigAlg=… as they are in the URL.
    const raw = Object.fromEntries(
      url.search
        .slice(1)
        .split("&")
        .map((p) => [p.slice(0, p.indexOf("=")), p.slice(p.indexOf("=") + 1)]),
    );
    const signed = `SAMLRequest=${raw.SAMLRequest}&RelayState=${raw.RelayState}&SigAlg=${raw.SigAlg}`;
    expect(verify("RSA-SHA256", Buffer.from(signed), sp.certificatePem, Buffer.from(url.searchParams.get("Signature")!, "base64"))).toBe(true);
    expect(verify("RSA-SHA256", Buffer.from(signed), other.certPem, Buffer.from(url.searchParams.get("Signature")!, "base64"))).toBe(false);

    const r = await fetch(start.url);
    expect(r.status).toBe(200);
    expect(idp.requests.at(-1)).toMatchObject({ id: start.requestId, acsUrl: sp.acsUrl, issuer: sp.entityId, binding: "redirect", signed: true });
  });

  it("POST: the action and the fields (SAMLRequest as base64 XML, not deflated; RelayState) for a form", async () => {
    const start = await saml.start(settings({ binding: "post" }), sp, "relay-3");
    if (start.kind !== "post") throw new Error("expected a form");
    expect(start.action).toBe(idp.ssoUrl);
    expect(Object.keys(start.fields).sort()).toEqual(["RelayState", "SAMLRequest"]);
    expect(start.fields.RelayState).toBe("relay-3");
    const xml = Buffer.from(start.fields.SAMLRequest!, "base64").toString("utf8");
    expect(parse(xml).documentElement!.getAttribute("ID")).toBe(start.requestId);
    expect(xml).not.toContain("Signature");

    const r = await fetch(start.action, { method: "POST", body: new URLSearchParams(start.fields) });
    expect(r.status, await r.clone().text()).toBe(200);
    expect(idp.requests.at(-1)).toEqual({ id: start.requestId, acsUrl: sp.acsUrl, issuer: sp.entityId, binding: "post", signed: false, relayState: "relay-3" });
  });

  it("POST, withSignedRequest: an enveloped RSA-SHA256 signature in the AuthnRequest that the SP's certificate verifies", async () => {
    const start = await saml.start(settings({ binding: "post", withSignedRequest: true }), sp, "relay-4");
    if (start.kind !== "post") throw new Error("expected a form");
    const xml = Buffer.from(start.fields.SAMLRequest!, "base64").toString("utf8");
    const doc = parse(xml);
    const signature = doc.getElementsByTagNameNS(DS, "Signature")[0]!;
    expect(signature.parentNode).toBe(doc.documentElement);
    const check = new SignedXml({ publicCert: sp.certificatePem });
    check.loadSignature(signature);
    expect(check.checkSignature(xml)).toBe(true);
    expect(xml).toContain("http://www.w3.org/2001/04/xmldsig-more#rsa-sha256");

    const r = await fetch(start.action, { method: "POST", body: new URLSearchParams(start.fields) });
    expect(r.status).toBe(200);
    expect(idp.requests.at(-1)).toMatchObject({ id: start.requestId, binding: "post", signed: true });
  });

  it("refuses a binding the IdP's metadata does not offer, and a relay state that is not short and URL-safe", async () => {
    const postOnly = idp.metadataXml.replace(/<md:SingleSignOnService Binding="[^"]*HTTP-Redirect"[^>]*\/>/, "");
    await expect(saml.start(settings({ metadataXml: postOnly }), sp, "r")).rejects.toThrow(/no SingleSignOnService for .*HTTP-Redirect/);
    await expect(saml.start(settings(), sp, "a b")).rejects.toThrow(/relay state/);
    await expect(saml.start(settings(), sp, "x".repeat(81))).rejects.toThrow(/relay state/);
  });
});

describe("finish", () => {
  it("takes a valid response (Response and assertion signed) and maps the user", async () => {
    const before = Date.now();
    const { user, assertionId, notOnOrAfter } = await saml.finish(settings(), sp, responseFor(REQUEST_ID), REQUEST_ID);
    expect(user).toMatchObject({
      id: "ada-persistent-1",
      username: "ada",
      email: "ada@idp.example",
      emailVerified: false,
      givenName: "Ada",
      familyName: "Lovelace",
      displayName: "Ada Lovelace",
    });
    expect(user.raw).toMatchObject({
      ...ATTRIBUTES,
      nameID: "ada-persistent-1",
      nameIDFormat: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent",
      issuer: idp.entityId,
    });
    expect(typeof user.raw.sessionIndex).toBe("string");
    expect(assertionId).toMatch(/^_[0-9a-f]{40}$/);
    // The stand-in's assertions end five minutes after they are issued.
    expect(notOnOrAfter).toBeGreaterThan(before + 4 * 60_000);
    expect(notOnOrAfter).toBeLessThanOrEqual(Date.now() + 5 * 60_000);
  });

  it("takes a response with only the assertion signed", async () => {
    const { user } = await saml.finish(settings(), sp, responseFor(REQUEST_ID, { variant: "assertion-signed-only" }), REQUEST_ID);
    expect(user.id).toBe("ada-persistent-1");
  });

  it("takes a signed Response around an unsigned assertion (SAML Profiles 4.1.3.5: one or the other)", async () => {
    // The stand-in has no such variant: its unsigned response, signed here with another key, which the metadata names.
    const signed = signedByOther(Buffer.from(responseFor(REQUEST_ID, { variant: "unsigned" }), "base64").toString("utf8"));
    const { user } = await saml.finish(settings({ metadataXml: otherMetadata() }), sp, signed, REQUEST_ID);
    expect(user.id).toBe("ada-persistent-1");
    // The same response against the IdP's real certificate: its signature is not the IdP's.
    await expect(saml.finish(settings(), sp, signed, REQUEST_ID)).rejects.toThrow(/Invalid signature/);
  });

  it("without attributes: the e-mail address from an emailAddress NameID, the username from it", async () => {
    const { user } = await saml.finish(settings(), sp, responseFor(REQUEST_ID, { nameId: "grace@idp.example", attributes: {} }), REQUEST_ID);
    expect(user).toMatchObject({ id: "grace@idp.example", email: "grace@idp.example", username: "grace@idp.example", emailVerified: false });
    expect(user.givenName).toBeUndefined();
  });

  it("reads the other attribute names: mail, firstName, sn, name, the WS-Federation claims", async () => {
    const claims = "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/";
    const a = await saml.finish(
      settings(),
      sp,
      responseFor(REQUEST_ID, { attributes: { mail: "m@idp.example", firstName: "F", sn: "S", name: "N" } }),
      REQUEST_ID,
    );
    // the e-mail is never the username (SAML vouches for no address): the NameID stands in
    expect(a.user).toMatchObject({ email: "m@idp.example", username: a.user.id, givenName: "F", familyName: "S", displayName: "N" });
    const b = await saml.finish(
      settings(),
      sp,
      responseFor(REQUEST_ID, {
        attributes: { [`${claims}emailaddress`]: "c@idp.example", [`${claims}givenname`]: "G", [`${claims}surname`]: "H", username: "u1" },
      }),
      REQUEST_ID,
    );
    expect(b.user).toMatchObject({ email: "c@idp.example", username: "u1", givenName: "G", familyName: "H" });
  });

  it("a transient NameID: the user is the mapping attribute's value, and without it there is none", async () => {
    const s = settings({ nameIdFormat: TRANSIENT, transientMappingAttributeName: "employeeId" });
    const { user } = await saml.finish(s, sp, responseFor(REQUEST_ID, { nameId: "_transient-abc", attributes: { employeeId: "E-42" } }), REQUEST_ID);
    expect(user.id).toBe("E-42");
    expect(user.username).toBe("E-42");
    expect(user.raw.nameID).toBe("_transient-abc");
    await expect(saml.finish(s, sp, responseFor(REQUEST_ID, { nameId: "_transient-abc", attributes: {} }), REQUEST_ID)).rejects.toThrow(
      /no attribute employeeId/,
    );
  });

  const refusals: [string, () => string, string | undefined, RegExp][] = [
    ["unsigned", () => responseFor(REQUEST_ID, { variant: "unsigned" }), undefined, /Invalid signature/],
    ["wrapped", () => responseFor(REQUEST_ID, { variant: "wrapped" }), undefined, /Invalid signature/],
    ["moved-signature", () => responseFor(REQUEST_ID, { variant: "moved-signature" }), undefined, /Invalid signature/],
    ["foreign-audience", () => responseFor(REQUEST_ID, { variant: "foreign-audience" }), undefined, /audience mismatch/],
    ["expired", () => responseFor(REQUEST_ID, { variant: "expired" }), undefined, /No valid subject confirmation|expired/],
    ["wrong-in-response-to", () => responseFor(REQUEST_ID, { variant: "wrong-in-response-to" }), undefined, /InResponseTo/],
    ["for another ACS URL", () => responseFor(REQUEST_ID, { acsUrl: "http://sp.test/idps/999/saml/acs" }), undefined, /destination/],
    ["for another request than the one expected", () => responseFor(REQUEST_ID), "_another-request", /InResponseTo/],
    ["without an expected request (IdP-initiated)", () => responseFor(REQUEST_ID), "", /no request to answer/],
    ["that is not base64", () => "<samlp:Response/>", undefined, /not base64/],
  ];
  for (const [name, build, expected, message] of refusals) {
    it(`refuses a response ${name}`, async () => {
      const e = await saml.finish(settings(), sp, build(), expected ?? REQUEST_ID).then(
        (r) => r.user,
        (err: Error) => err,
      );
      // Never a user, and never the attacker's.
      expect(e).toBeInstanceOf(SamlResponseRefused);
      expect((e as Error).message).toMatch(message);
    });
  }

  it("a wrapped response never signs in its unsigned assertion's user, whichever the expected request", async () => {
    for (const variant of ["wrapped", "moved-signature"] as const) {
      const r = await saml
        .finish(settings(), sp, responseFor(REQUEST_ID, { variant, attributes: { email: "ada@idp.example" } }), REQUEST_ID)
        .catch(() => undefined);
      expect(r).toBeUndefined();
      expect(r?.user.id).not.toBe(EVIL_NAME_ID);
    }
  });

  it("refuses an assertion signed by a key the metadata does not name", async () => {
    await expect(saml.finish(settings({ metadataXml: otherMetadata() }), sp, responseFor(REQUEST_ID), REQUEST_ID)).rejects.toThrow(/Invalid signature/);
  });

  it("refuses signed responses whose assertion answers another request, has no Recipient, or whose Response names no request", async () => {
    const s = settings({ metadataXml: otherMetadata() });
    const data = (doc: Document) => doc.getElementsByTagNameNS(SAML_NS, "SubjectConfirmationData")[0]!;
    const cases: [string, (doc: Document) => void, RegExp][] = [
      ["assertion for another request", (doc) => data(doc).setAttribute("InResponseTo", "_another-request"), /InResponseTo does not match/],
      ["no Recipient", (doc) => data(doc).removeAttribute("Recipient"), /no bearer confirmation for this ACS URL/],
      [
        "not a bearer confirmation",
        (doc) => (data(doc).parentNode as Element).setAttribute("Method", "urn:oasis:names:tc:SAML:2.0:cm:holder-of-key"),
        /no bearer/,
      ],
      ["no InResponseTo on the Response", (doc) => doc.documentElement!.removeAttribute("InResponseTo"), /InResponseTo is missing/],
      [
        "a Response not a success",
        (doc) =>
          doc
            .getElementsByTagNameNS("urn:oasis:names:tc:SAML:2.0:protocol", "StatusCode")[0]!
            .setAttribute("Value", "urn:oasis:names:tc:SAML:2.0:status:Requester"),
        /status is not success/,
      ],
    ];
    for (const [name, edit, message] of cases) {
      await expect(saml.finish(s, sp, editedResponse(edit), REQUEST_ID), name).rejects.toThrow(message);
    }
    // Unchanged, the same construction passes: the refusals above are the edits'.
    await expect(
      saml.finish(
        s,
        sp,
        editedResponse(() => {}),
        REQUEST_ID,
      ),
    ).resolves.toBeDefined();
  });

  it("refuses an assertion whose Issuer is not the metadata's entity ID (the Response's Issuer left out)", async () => {
    const xml = Buffer.from(responseFor(REQUEST_ID, { variant: "assertion-signed-only" }), "base64").toString("utf8");
    const doc = parse(xml);
    const responseIssuer = doc.documentElement!.getElementsByTagNameNS(SAML_NS, "Issuer")[0]!;
    doc.documentElement!.removeChild(responseIssuer);
    const metadataXml = idp.metadataXml.replace(`entityID="${idp.entityId}"`, `entityID="http://other-idp.example/metadata"`);
    await expect(saml.finish(settings({ metadataXml }), sp, Buffer.from(doc.toString()).toString("base64"), REQUEST_ID)).rejects.toThrow(
      /not from the IdP's entity ID/,
    );
  });

  it("refuses an assertion from another entity ID than the metadata's", async () => {
    const metadataXml = idp.metadataXml.replace(`entityID="${idp.entityId}"`, `entityID="http://other-idp.example/metadata"`);
    await expect(saml.finish(settings({ metadataXml }), sp, responseFor(REQUEST_ID), REQUEST_ID)).rejects.toThrow(/another issuer/);
  });

  it("refuses a Recipient for another ACS even when the Response's unsigned Destination is ours", async () => {
    const xml = Buffer.from(responseFor(REQUEST_ID, { variant: "assertion-signed-only", acsUrl: "http://sp.test/idps/999/saml/acs" }), "base64").toString(
      "utf8",
    );
    const doc = parse(xml);
    doc.documentElement!.setAttribute("Destination", sp.acsUrl);
    const forged = Buffer.from(doc.toString()).toString("base64");
    await expect(saml.finish(settings(), sp, forged, REQUEST_ID)).rejects.toThrow(/Recipient/);
  });

  it("checks the times against its own clock too (`now`), within the accepted skew", async () => {
    const later = new SamlFederation({ now: () => Date.now() + 10 * 60_000 });
    await expect(later.finish(settings(), sp, responseFor(REQUEST_ID), REQUEST_ID)).rejects.toThrow(/expired/);
    const slightlyLater = new SamlFederation({ now: () => Date.now() + 5 * 60_000 + 30_000 });
    await expect(slightlyLater.finish(settings(), sp, responseFor(REQUEST_ID), REQUEST_ID)).resolves.toBeDefined();
    expect(() => new SamlFederation({ clockSkewMs: -1 })).toThrow(/clockSkewMs/);
  });
});

describe("metadata", () => {
  it("is an EntityDescriptor with an SPSSODescriptor: our entity ID, the signing certificate, the ACS (HTTP-POST)", () => {
    for (const withSignedRequest of [false, true]) {
      const xml = saml.metadata(settings({ withSignedRequest }), sp);
      const doc = parse(xml);
      const root = doc.documentElement!;
      expect(root.namespaceURI).toBe(MD);
      expect(root.localName).toBe("EntityDescriptor");
      expect(root.getAttribute("entityID")).toBe(sp.entityId);
      const descriptor = doc.getElementsByTagNameNS(MD, "SPSSODescriptor")[0]!;
      expect(descriptor.getAttribute("AuthnRequestsSigned")).toBe(String(withSignedRequest));
      expect(descriptor.getAttribute("WantAssertionsSigned")).toBe("true");
      expect(descriptor.getAttribute("protocolSupportEnumeration")).toBe("urn:oasis:names:tc:SAML:2.0:protocol");
      const key = doc.getElementsByTagNameNS(MD, "KeyDescriptor")[0]!;
      expect(key.getAttribute("use")).toBe("signing");
      expect(key.getElementsByTagNameNS(DS, "X509Certificate")[0]!.textContent).toBe(certBody(sp.certificatePem));
      const acs = doc.getElementsByTagNameNS(MD, "AssertionConsumerService")[0]!;
      expect(acs.getAttribute("Binding")).toBe("urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST");
      expect(acs.getAttribute("Location")).toBe(sp.acsUrl);
      expect(doc.getElementsByTagNameNS(MD, "NameIDFormat")[0]!.textContent).toBe("urn:oasis:names:tc:SAML:2.0:nameid-format:persistent");
    }
  });
});
