import { createPrivateKey, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import tls from "node:tls";

/** SVC_TLS_CERT and SVC_TLS_KEY: PEM files, absolute paths. */
export interface TlsFiles {
  certPath: string;
  keyPath: string;
}

/** A certificate (chain) and its private key as read from the files, checked to belong together. */
export interface TlsPair {
  cert: Buffer;
  key: Buffer;
  /** The leaf certificate's serial number (hex), for logs and tests. */
  serial: string;
  /** The leaf certificate's subject, one line. */
  subject: string;
  /** When the leaf certificate expires (its notAfter). */
  validTo: Date;
}

/** Why a certificate and key cannot serve, in one line naming the variable and the file. */
export class TlsPairError extends Error {
  override name = "TlsPairError";
}

/** A file of the pair, or a TlsPairError naming the variable. */
export function readTlsFile(variable: "SVC_TLS_CERT" | "SVC_TLS_KEY", path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new TlsPairError(`${variable} ${path} cannot be read: ${err.code ?? err.message}`);
  }
}

/**
 * Reads and checks the pair: the certificate file must start with a PEM certificate (the leaf; intermediates
 * may follow), the key file must hold an unencrypted PEM private key, the key must be the certificate's, and
 * Node's TLS must accept both. Every failure is one line naming the variable (start-up error, reload warning).
 */
export function readTlsPair(files: TlsFiles): TlsPair {
  return parseTlsPair(files, readTlsFile("SVC_TLS_CERT", files.certPath), readTlsFile("SVC_TLS_KEY", files.keyPath));
}

/** Checks the contents of the two files (see readTlsPair). */
export function parseTlsPair(files: TlsFiles, cert: Buffer, key: Buffer): TlsPair {
  let leaf: X509Certificate;
  try {
    if (!cert.includes("-----BEGIN CERTIFICATE-----")) throw new Error("no PEM block");
    leaf = new X509Certificate(cert);
  } catch {
    throw new TlsPairError(`SVC_TLS_CERT ${files.certPath} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  }
  let privateKey: ReturnType<typeof createPrivateKey>;
  try {
    if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(key.toString("latin1"))) throw new Error("no PEM block");
    privateKey = createPrivateKey({ key, format: "pem" });
  } catch {
    throw new TlsPairError(`SVC_TLS_KEY ${files.keyPath} holds no unencrypted PEM private key (PKCS#8, PKCS#1 or SEC1)`);
  }
  if (!leaf.checkPrivateKey(privateKey)) {
    throw new TlsPairError(`SVC_TLS_KEY ${files.keyPath} is not the key of the certificate in SVC_TLS_CERT ${files.certPath}`);
  }
  try {
    tls.createSecureContext({ cert, key });
  } catch (e) {
    throw new TlsPairError(`SVC_TLS_CERT ${files.certPath} and SVC_TLS_KEY ${files.keyPath} are refused by TLS: ${(e as Error).message}`);
  }
  return { cert, key, serial: leaf.serialNumber, subject: leaf.subject.replaceAll("\n", ", "), validTo: new Date(leaf.validTo) };
}
