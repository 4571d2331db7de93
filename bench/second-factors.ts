// Second-factor verification next to password verification (issue 14), in this process: a TOTP code against
// its secret (the login's check, window ±1) and a WebAuthn assertion through @simplewebauthn/server (ES256, as
// Chromium's virtual authenticator and most security keys sign). The assertion is made here with node:crypto,
// so the bench needs no browser; the verification is the one the login runs.
import { createHash, generateKeyPairSync, sign } from "node:crypto";
import { verifyAuthenticationResponse } from "@simplewebauthn/server";
import { isoCBOR } from "@simplewebauthn/server/helpers";
import { Secret, TOTP } from "otpauth";
import { codeMatches } from "../src/command/totp.js";
import { percentile } from "./load.js";

type BenchResult = { name: string; rps: number; p50: number; p99: number; errors: number };

/** Runs `op` for `seconds`, one at a time (both checks are CPU-bound on the main thread). */
async function measure(name: string, seconds: number, op: () => Promise<boolean> | boolean): Promise<BenchResult> {
  const latencies: number[] = [];
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    const t0 = performance.now();
    if (!(await op())) throw new Error(`${name}: the bench credential did not verify`);
    latencies.push(performance.now() - t0);
  }
  latencies.sort((a, b) => a - b);
  return { name, rps: latencies.length / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors: 0 };
}

const b64url = (b: Uint8Array | Buffer) => Buffer.from(b).toString("base64url");

/** A signed assertion of a P-256 credential for one challenge, and the credential as the server stores it. */
function assertion() {
  const rpId = "bench.example";
  const origin = `https://${rpId}`;
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const jwk = publicKey.export({ format: "jwk" });
  const cose = isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(jwk.x!, "base64url")],
      [-3, Buffer.from(jwk.y!, "base64url")],
    ]),
  );
  const challenge = b64url(Buffer.from("bench-challenge-0123456789abcdef"));
  const clientDataJSON = Buffer.from(JSON.stringify({ type: "webauthn.get", challenge, origin }));
  // RP ID hash, flags (user present), signature counter 0.
  const authData = Buffer.concat([createHash("sha256").update(rpId).digest(), Buffer.from([0x01]), Buffer.alloc(4)]);
  const signature = sign("sha256", Buffer.concat([authData, createHash("sha256").update(clientDataJSON).digest()]), privateKey);
  const id = b64url(Buffer.from("bench-credential"));
  return {
    opts: { expectedChallenge: challenge, expectedOrigin: origin, expectedRPID: rpId, requireUserVerification: false },
    credential: { id, publicKey: new Uint8Array(cose), counter: 0 },
    response: {
      id,
      rawId: id,
      type: "public-key" as const,
      clientExtensionResults: {},
      response: { clientDataJSON: b64url(clientDataJSON), authenticatorData: b64url(authData), signature: b64url(signature) },
    },
  };
}

/** TOTP and WebAuthn verification, and their throughput as a multiple of password verification's. */
export async function secondFactorBench(seconds: number, password: BenchResult) {
  const secret = new Secret({ size: 20 }).base32;
  const totp = new TOTP({ algorithm: "SHA1", digits: 6, period: 30, secret: Secret.fromBase32(secret) });
  const totpResult = await measure("verify TOTP code, in process (window ±1)", seconds, () => codeMatches(secret, totp.generate()));
  const a = assertion();
  const webauthnResult = await measure("verify WebAuthn assertion, in process (ES256)", seconds, async () => {
    const v = await verifyAuthenticationResponse({ ...a.opts, response: a.response, credential: a.credential });
    return v.verified;
  });
  const ratio = (r: BenchResult) =>
    `${r.name}: ${(r.rps / password.rps).toFixed(1)}× password verification (${r.rps.toFixed(0)} vs ${password.rps.toFixed(0)} ops/s)`;
  return { results: [totpResult, webauthnResult], lines: [ratio(totpResult), ratio(webauthnResult)] };
}
