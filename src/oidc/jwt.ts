import { sign, verify, type KeyObject } from "node:crypto";

/**
 * Compact JWS with RS256 through node:crypto: our own tokens are signed and checked on the hot path, where
 * `jose` (WebCrypto) is several times slower. Client assertions from outside go through `jose` instead.
 */
const b64 = (v: Buffer | string) => Buffer.from(v).toString("base64url");

export function signJwt(payload: Record<string, unknown>, key: { kid: string; privateKey: KeyObject }, typ = "JWT"): string {
  const head = b64(JSON.stringify({ alg: "RS256", typ, kid: key.kid }));
  const body = b64(JSON.stringify(payload));
  const signature = sign("RSA-SHA256", Buffer.from(`${head}.${body}`), key.privateKey);
  return `${head}.${body}.${b64(signature)}`;
}

export interface DecodedJwt {
  header: { alg?: string; kid?: string; typ?: string };
  payload: Record<string, unknown>;
  signingInput: string;
  signature: Buffer;
}

/** The parts of a compact JWS, or undefined when it is not one. */
export function decodeJwt(token: string): DecodedJwt | undefined {
  const parts = token.split(".");
  if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]*$/.test(p))) return undefined;
  try {
    return {
      header: JSON.parse(Buffer.from(parts[0]!, "base64url").toString()),
      payload: JSON.parse(Buffer.from(parts[1]!, "base64url").toString()),
      signingInput: `${parts[0]}.${parts[1]}`,
      signature: Buffer.from(parts[2]!, "base64url"),
    };
  } catch {
    return undefined;
  }
}

/** Checks an RS256 signature with the key the header names; `alg: none` and other algorithms never verify. */
export function verifyRs256(jwt: DecodedJwt, keyOf: (kid: string) => KeyObject | undefined): boolean {
  if (jwt.header.alg !== "RS256" || typeof jwt.header.kid !== "string") return false;
  const key = keyOf(jwt.header.kid);
  return !!key && verify("RSA-SHA256", Buffer.from(jwt.signingInput), key, jwt.signature);
}
