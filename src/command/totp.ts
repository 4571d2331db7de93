import { Secret, TOTP } from "otpauth";
import type { User } from "../../gen/prisma/client.js";
import type { SecretBox } from "../crypto/secrets.js";
import { errors } from "../errors/errors.js";
import type { EventStore } from "../eventstore/eventstore.js";
import type { Database } from "../storage/database.js";
import type { ChangeDetails } from "./aggregate.js";
import { changeHuman } from "./humans.js";
import { mfaInitSkipped, totpAdded, totpCheckSucceeded, totpRemoved, totpVerified } from "../events/index.js";
import { limitedSignIn, type SignInLimits, type TooManyFailures } from "./failure-limits.js";
import { countFailedCheck, type Lockout } from "./login.js";
import type { ReplayGuard } from "./replay.js";

/**
 * TOTP (RFC 6238) second factor: SHA-1, 6 digits, 30 s, the defaults every authenticator app reads from an
 * otpauth:// URI. The secret is sealed with the master key in the event and the projection, so that an export
 * can carry it; it is opened only to check a code or to show it once at enrolment.
 */
const DIGITS = 6;
const PERIOD = 30;
/** Codes of the previous and the next period are accepted too (clock drift). */
const WINDOW = 1;

function totpOf(secretBase32: string, issuer: string, label: string): TOTP {
  return new TOTP({ issuer, label, algorithm: "SHA1", digits: DIGITS, period: PERIOD, secret: Secret.fromBase32(secretBase32) });
}

/** Whether `code` is the secret's code at `now` (ms: the server's clock; the system's by default), within the drift window. */
export function codeMatches(secretBase32: string, code: string, now = Date.now()): boolean {
  return matchedStep(secretBase32, code, now) !== undefined;
}

/** The time step (30 s periods since the epoch) whose code this is at `now`, within the drift window; undefined: none. */
function matchedStep(secretBase32: string, code: string, now: number): number | undefined {
  const token = code.replace(/\s/g, "");
  if (!/^\d{6}$/.test(token)) return undefined;
  const delta = totpOf(secretBase32, "", "").validate({ token, window: WINDOW, timestamp: now });
  return delta === null ? undefined : Math.floor(now / 1000 / PERIOD) + delta;
}

export interface TotpEnrolment {
  /** Base32, for typing into an app. */
  secret: string;
  /** otpauth:// URI, for the QR code. */
  uri: string;
}

/**
 * Starts an enrolment: a new secret, unverified until a correct code is given. An unverified one is replaced;
 * a verified one must be removed first (ALREADY_EXISTS).
 */
export async function addTotp(
  es: EventStore,
  box: SecretBox,
  a: { instanceId: string; userId: string; creator: string; issuer: string; accountName?: string },
): Promise<TotpEnrolment & { details: ChangeDetails }> {
  const secret = new Secret({ size: 20 }).base32;
  let label = a.accountName ?? "";
  const details = await changeHuman(es, a, "second factors", async (u, w) => {
    const existing = await w.tx.userTotp.findUnique({ where: { userId: u.id }, select: { verified: true } });
    if (existing?.verified) throw errors.alreadyExists("TOTP-x3n8", `user "${u.id}" already has a verified TOTP authenticator; remove it first`);
    label ||= u.username;
    return [totpAdded.change({ secret: box.seal(secret) })];
  });
  return { secret, uri: totpOf(secret, a.issuer, label).toString(), details };
}

/** Confirms an enrolment with a current code; a wrong code is INVALID_ARGUMENT naming `code`. */
export function verifyTotp(es: EventStore, box: SecretBox, a: { instanceId: string; userId: string; creator: string; code: string }): Promise<ChangeDetails> {
  return changeHuman(es, a, "second factors", async (u, w) => {
    const row = await w.tx.userTotp.findUnique({ where: { userId: u.id } });
    if (!row) throw errors.notFound("TOTP-p5w2", `user "${u.id}" has no TOTP authenticator to verify`);
    if (row.verified) throw errors.failedPrecondition("TOTP-b8c3", `the TOTP authenticator of user "${u.id}" is already verified`);
    if (!codeMatches(box.open(row.secret), a.code, w.clock.now())) throw errors.invalidArgument("TOTP-v4z6", "code: the code is not valid");
    return [totpVerified.change()];
  });
}

export function removeTotp(es: EventStore, a: { instanceId: string; userId: string; creator: string }): Promise<ChangeDetails> {
  return changeHuman(es, a, "second factors", async (u, w) => {
    const row = await w.tx.userTotp.findUnique({ where: { userId: u.id }, select: { userId: true } });
    if (!row) throw errors.notFound("TOTP-r9d1", `user "${u.id}" has no TOTP authenticator`);
    return [totpRemoved.change()];
  });
}

/** The user puts off setting up a second factor (asked again after the login settings' mfa_init_skip_lifetime). */
export async function skipMfaInit(es: EventStore, a: { instanceId: string; userId: string; orgId: string }): Promise<void> {
  await es.execute((w) => w.push(a.instanceId, a.userId, [mfaInitSkipped.event({ aggregateId: a.userId, resourceOwner: a.orgId })]));
}

/** When the user last put off setting up a second factor, if ever. */
export async function mfaInitSkippedAt(db: Database, instanceId: string, userId: string): Promise<Date | undefined> {
  const row = await db.prisma.userMfaInitSkip.findUnique({ where: { userId } });
  return row && row.instanceId === instanceId ? row.skippedAt : undefined;
}

/** Whether the user has a verified TOTP authenticator (the login asks for a code then). */
export async function hasVerifiedTotp(db: Database, instanceId: string, userId: string): Promise<boolean> {
  const row = await db.prisma.userTotp.findUnique({ where: { userId }, select: { instanceId: true, verified: true } });
  return !!row && row.instanceId === instanceId && row.verified;
}

/**
 * A code at sign-in, against the user's verified authenticator (security review, finding 5). A wrong code counts
 * toward the lockout (its own count, `otp_failures`: a right password, which comes first, must not reset it); a
 * right one is used up (RFC 6238 §5.2: a second use of an accepted code is refused), through the replay guard's
 * unique key, so two sign-ins with one code cannot both pass. As for passwords, the answer is decided on the
 * user's state under its lock after the code matched: parallel guesses may have locked the user meanwhile.
 * Over its failure limits the check is refused before it is tried.
 */
export async function checkTotp(
  es: EventStore,
  db: Database,
  box: SecretBox,
  replay: ReplayGuard,
  a: Lockout & { user: User; code: string; limits?: SignInLimits | undefined },
): Promise<true | undefined | TooManyFailures> {
  return limitedSignIn(a.limits, a.user.id, async () => {
    const row = await db.prisma.userTotp.findUnique({ where: { userId: a.user.id } });
    if (!row || row.instanceId !== a.instanceId || !row.verified) return undefined;
    const step = matchedStep(box.open(row.secret), a.code, es.clock.now());
    const fresh = step !== undefined && (await replay.firstUse(`totp:${a.user.id}:${step}`, (step + WINDOW + 1) * PERIOD));
    if (!fresh) return countFailedCheck(es, a, a.user, "totp");
    const ref = { aggregateId: a.user.id, resourceOwner: a.user.orgId };
    const { result } = await es.execute(async (w) => {
      await w.lock(a.instanceId, "user", ref.aggregateId);
      const user = await w.tx.user.findUnique({ where: { id: ref.aggregateId } });
      if (user?.state !== "active") return undefined;
      if (user.otpFailures > 0) await w.push(a.instanceId, user.id, [totpCheckSucceeded.event(ref)]);
      return true as const;
    });
    return result;
  });
}
