import { X509Certificate } from "node:crypto";
import type { JsonObject } from "@bufbuild/protobuf";
import { DOMParser } from "@xmldom/xmldom";
import type { IdpKind } from "../../domain/idps.js";
import { errors } from "../../errors/errors.js";

/**
 * What a kind's configuration must hold beyond what its proto's field options check (lengths, URLs, patterns):
 * rules across fields, and content that must parse. `json`: the configuration as proto JSON; `field`: its path
 * in the request, for the error (INVALID_ARGUMENT naming the field).
 */
export function checkKindConfig(kind: IdpKind, json: JsonObject, field: string): void {
  const invalid = (name: string, why: string) => errors.invalidArgument("IDP-c0nf", `invalid ${field}.${name}: ${why}`);
  switch (kind) {
    case "ldap": {
      if (!Array.isArray(json.servers) || json.servers.length === 0) throw invalid("servers", "at least one ldap:// or ldaps:// server is needed");
      if (typeof json.timeout === "string" && json.timeout.startsWith("-")) throw invalid("timeout", "must not be negative");
      return;
    }
    case "saml": {
      const xml = typeof json.metadataXml === "string" ? json.metadataXml : "";
      const url = typeof json.metadataUrl === "string" ? json.metadataUrl : "";
      if (!xml === !url) throw invalid("metadata_xml", "give exactly one of metadata_xml and metadata_url");
      if (xml) checkSamlMetadata(xml, (why) => invalid("metadata_xml", why));
      return;
    }
    default:
      return;
  }
}

const MD = "urn:oasis:names:tc:SAML:2.0:metadata";
const DS = "http://www.w3.org/2000/09/xmldsig#";

/**
 * An identity provider's SAML metadata: well-formed XML with an IDPSSODescriptor that has a single sign-on
 * service and a signing certificate (a KeyDescriptor for signing, or for any use) that parses as X.509.
 */
export function checkSamlMetadata(xml: string, invalid: (why: string) => Error): void {
  let problem: string | undefined;
  const doc = new DOMParser({
    errorHandler: {
      warning: () => {},
      error: (m: string) => (problem ??= m),
      fatalError: (m: string) => (problem ??= m),
    },
  }).parseFromString(xml, "text/xml");
  if (problem || !doc?.documentElement) throw invalid(`not well-formed XML: ${problem ?? "no root element"}`);
  const idp = doc.getElementsByTagNameNS(MD, "IDPSSODescriptor")[0];
  if (!idp) throw invalid("no IDPSSODescriptor (SAML 2.0 metadata of an identity provider) in it");
  if (!idp.getElementsByTagNameNS(MD, "SingleSignOnService").length) throw invalid("the IDPSSODescriptor has no SingleSignOnService");
  const keys = Array.from(idp.getElementsByTagNameNS(MD, "KeyDescriptor")).filter((k) => {
    const use = k.getAttribute("use");
    return !use || use === "signing";
  });
  const certs = keys.flatMap((k) => Array.from(k.getElementsByTagNameNS(DS, "X509Certificate")));
  if (!certs.length) throw invalid("the IDPSSODescriptor has no signing certificate (KeyDescriptor with ds:X509Certificate)");
  for (const c of certs) {
    try {
      new X509Certificate(Buffer.from((c.textContent ?? "").replace(/\s+/g, ""), "base64"));
    } catch {
      throw invalid("a signing certificate is not a valid X.509 certificate");
    }
  }
}
