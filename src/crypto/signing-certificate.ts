import { webcrypto } from "node:crypto";
// @peculiar/x509 resolves its algorithms through tsyringe, which needs the Reflect metadata API.
import "reflect-metadata";
import * as x509 from "@peculiar/x509";

/** A key pair with a self-signed certificate, both PEM: what a SAML service provider signs its requests with. */
export interface SigningCertificate {
  privateKeyPem: string;
  certificatePem: string;
}

const ALGORITHM = { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" } as const;

/**
 * A new RSA-2048 key and a self-signed certificate for it (SHA-256), valid from now for `years`: identity providers
 * pin what a service provider's metadata publishes, so it lives as long as its provider does (ZITADEL's SAML
 * certificates last ten years too).
 */
export async function newSigningCertificate(commonName: string, now: Date, years = 10): Promise<SigningCertificate> {
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair;
  const notAfter = new Date(now);
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + years);
  const certificate = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(16)))
        .toString("hex")
        .replace(/^[89a-f]/, "1"),
      name: new x509.Name([{ CN: [commonName.replace(/[^\w .:/-]/g, "").slice(0, 64) || "service provider"] }]).toString(),
      notBefore: now,
      notAfter,
      keys,
      signingAlgorithm: ALGORITHM,
      extensions: [new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true)],
    },
    webcrypto as unknown as Crypto,
  );
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey("pkcs8", keys.privateKey)).toString("base64");
  return {
    privateKeyPem: `-----BEGIN PRIVATE KEY-----\n${pkcs8.match(/.{1,64}/g)!.join("\n")}\n-----END PRIVATE KEY-----\n`,
    certificatePem: certificate.toString("pem"),
  };
}
