import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from "@simplewebauthn/server";
import { errors } from "../errors/errors.js";
import type { EventStore } from "../eventstore/eventstore.js";
import { newId } from "../ids.js";
import type { Database } from "../storage/database.js";
import type { ChangeDetails } from "./aggregate.js";
import { changeHuman } from "./humans.js";
import { webauthnKeyAdded, webauthnKeyRemoved, webauthnKeyUsed } from "../events/index.js";

/** @simplewebauthn/server (with its ASN.1 libraries, about 25 MB), imported at the first ceremony rather than at every start (docs/drafts/build.md, "Idle memory"). */
const simpleWebauthn = () => import("@simplewebauthn/server");

/**
 * WebAuthn credentials: security keys as a second factor ("u2f", user presence) and passkeys for passwordless
 * sign-in (discoverable, user verification required). Challenges are not stored: the caller keeps the one the
 * options carry (sealed, expiring) and hands it back with the response.
 */

/** Who the credentials are for: the instance's domain as the request reached it, and the origin the browser must report. */
export interface RelyingParty {
  id: string;
  origin: string;
  name: string;
}

export type WebauthnPurpose = "u2f" | "passwordless";

/** What is wrong with a page's origin for an RP ID (WebAuthn's rule: the origin's host is the RP ID or under it), or undefined. */
export function originProblem(origin: string, rpId: string): string | undefined {
  const url = URL.canParse(origin) ? new URL(origin) : undefined;
  const ok = url && (url.protocol === "https:" || url.protocol === "http:") && url.origin === origin;
  const host = url?.hostname ?? "";
  return ok && (host === rpId || host.endsWith(`.${rpId}`)) ? undefined : `"${origin.slice(0, 100)}" is not an origin on the domain "${rpId}"`;
}

const TIMEOUT_MS = 5 * 60_000;
const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64url");
const fromB64url = (s: string) => new Uint8Array(Buffer.from(s, "base64url"));

export async function listWebauthnKeys(db: Database, instanceId: string, userId: string, purpose?: WebauthnPurpose) {
  return db.prisma.userWebauthnKey.findMany({
    where: { instanceId, userId, ...(purpose ? { passwordless: purpose === "passwordless" } : {}) },
    orderBy: { createdAt: "asc" },
  });
}

/** Options for navigator.credentials.create(); the user's existing credentials are excluded (no double registration). */
export async function startWebauthnRegistration(
  db: Database,
  a: { instanceId: string; user: { id: string; username: string; displayName: string }; rp: RelyingParty; purpose: WebauthnPurpose },
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const existing = await listWebauthnKeys(db, a.instanceId, a.user.id);
  const passkey = a.purpose === "passwordless";
  return (await simpleWebauthn()).generateRegistrationOptions({
    rpName: a.rp.name,
    rpID: a.rp.id,
    userName: a.user.username,
    userDisplayName: a.user.displayName || a.user.username,
    userID: new TextEncoder().encode(a.user.id),
    timeout: TIMEOUT_MS,
    attestationType: "none",
    excludeCredentials: existing.map((k) => ({ id: k.credentialId, transports: k.transports })),
    authenticatorSelection: passkey
      ? { residentKey: "required", requireResidentKey: true, userVerification: "required" }
      : { residentKey: "discouraged", userVerification: "discouraged" },
  });
}

/**
 * Verifies the attestation against the challenge, origin and RP ID, and stores the credential. A response that
 * does not verify is INVALID_ARGUMENT naming `credential`.
 */
export async function finishWebauthnRegistration(
  es: EventStore,
  a: {
    instanceId: string;
    userId: string;
    creator: string;
    rp: RelyingParty;
    challenge: string;
    purpose: WebauthnPurpose;
    name: string;
    response: RegistrationResponseJSON;
  },
): Promise<{ keyId: string; details: ChangeDetails }> {
  const passkey = a.purpose === "passwordless";
  const verification = await (await simpleWebauthn())
    .verifyRegistrationResponse({
      response: a.response,
      expectedChallenge: a.challenge,
      expectedOrigin: a.rp.origin,
      expectedRPID: a.rp.id,
      requireUserVerification: passkey,
    })
    .catch((e: Error) => {
      throw errors.invalidArgument("WEBAUTHN-r3g1", `credential: ${e.message.slice(0, 200)}`);
    });
  if (!verification.verified) throw errors.invalidArgument("WEBAUTHN-r3g2", "credential: the attestation does not verify");
  const { credential } = verification.registrationInfo;
  const keyId = newId();
  const details = await changeHuman(es, a, "security keys and passkeys", async (_u, w) => {
    const taken = await w.tx.userWebauthnKey.findUnique({
      where: { instanceId_credentialId: { instanceId: a.instanceId, credentialId: credential.id } },
      select: { id: true },
    });
    if (taken) throw errors.alreadyExists("WEBAUTHN-d5p3", "credential: this credential is already registered");
    return [
      webauthnKeyAdded.change({
        keyId,
        credentialId: credential.id,
        publicKey: b64url(credential.publicKey),
        counter: credential.counter,
        transports: credential.transports ?? [],
        name: a.name.trim().slice(0, 200) || (passkey ? "Passkey" : "Security key"),
        passwordless: passkey,
      }),
    ];
  });
  return { keyId, details };
}

export function removeWebauthnKey(es: EventStore, a: { instanceId: string; userId: string; creator: string; keyId: string }): Promise<ChangeDetails> {
  return changeHuman(es, a, "security keys and passkeys", async (u, w) => {
    const row = await w.tx.userWebauthnKey.findUnique({ where: { id: a.keyId }, select: { userId: true } });
    if (row?.userId !== u.id) throw errors.notFound("WEBAUTHN-k8r2", `user "${u.id}" has no security key or passkey "${a.keyId}"`);
    return [webauthnKeyRemoved.change({ keyId: a.keyId })];
  });
}

/**
 * Options for navigator.credentials.get(): for a known user (second factor) the credentials it may use; for
 * passwordless none, so that the authenticator offers its discoverable credentials.
 */
export async function startWebauthnLogin(
  db: Database,
  a: { instanceId: string; userId?: string; rp: RelyingParty; purpose: WebauthnPurpose },
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const keys = a.userId ? await listWebauthnKeys(db, a.instanceId, a.userId, a.purpose) : [];
  return (await simpleWebauthn()).generateAuthenticationOptions({
    rpID: a.rp.id,
    timeout: TIMEOUT_MS,
    allowCredentials: keys.map((k) => ({ id: k.credentialId, transports: k.transports })),
    userVerification: a.purpose === "passwordless" ? "required" : "discouraged",
  });
}

/**
 * Checks an assertion: the credential must be the user's (second factor) or any passkey of the instance
 * (passwordless), signed over the challenge for this origin and RP ID, with user verification for a passkey.
 * The counter is recorded. Returns the user, or undefined for anything that does not verify.
 */
export async function finishWebauthnLogin(
  es: EventStore,
  db: Database,
  a: { instanceId: string; userId?: string; rp: RelyingParty; challenge: string; purpose: WebauthnPurpose; response: AuthenticationResponseJSON },
): Promise<{ userId: string; orgId: string } | undefined> {
  const credentialId = typeof a.response?.id === "string" ? a.response.id : "";
  const key = await db.prisma.userWebauthnKey.findUnique({ where: { instanceId_credentialId: { instanceId: a.instanceId, credentialId } } });
  if (!key || key.passwordless !== (a.purpose === "passwordless") || (a.userId && key.userId !== a.userId)) return undefined;
  const verification = await (await simpleWebauthn())
    .verifyAuthenticationResponse({
      response: a.response,
      expectedChallenge: a.challenge,
      expectedOrigin: a.rp.origin,
      expectedRPID: a.rp.id,
      credential: { id: key.credentialId, publicKey: fromB64url(key.publicKey), counter: Number(key.counter), transports: key.transports },
      requireUserVerification: key.passwordless,
    })
    .catch(() => undefined);
  if (!verification?.verified) return undefined;
  await es.execute((w) =>
    w.push(a.instanceId, key.userId, [
      webauthnKeyUsed.event({ aggregateId: key.userId, resourceOwner: key.orgId }, { keyId: key.id, counter: verification.authenticationInfo.newCounter }),
    ]),
  );
  return { userId: key.userId, orgId: key.orgId };
}
