import type { User } from "../../gen/prisma/client.js";
import { hashPassword, verifyDecoy, verifyPassword } from "../crypto/password.js";
import type { EventStore } from "../eventstore/eventstore.js";
import type { SettingsQueries } from "../query/settings.js";
import { passwordRules } from "../query/password-rules.js";
import { usableUserOf } from "../query/tenancy.js";
import { userByLoginName } from "../query/users.js";
import type { Database } from "../storage/database.js";
import type { SecretBox } from "../crypto/secrets.js";
import { errors } from "../errors/errors.js";
import type { ChangeDetails } from "./aggregate.js";
import { isTooManyFailures, limitedSignIn, type SignInLimits, type TooManyFailures } from "./failure-limits.js";
import { changeHuman } from "./humans.js";
import { endExpiredLockout } from "./lockouts.js";
import { codeEvents } from "./user-codes.js";
import { passwordChanged, passwordCheckFailed, passwordCheckSucceeded, totpCheckFailed, userLocked } from "../events/index.js";

/** The time a password check costs, spent without checking anything (no user, or one that may not sign in). */
async function decoyCheck(password: string): Promise<undefined> {
  await verifyDecoy(password);
  return undefined;
}

/** The lockout settings a failed check is counted under. */
export interface Lockout {
  instanceId: string;
  maxAttempts: (user: User) => Promise<number>;
  /** Seconds a lock at the limit lasts; 0 or absent: until an administrator unlocks (the permanent lockout). */
  lockoutDurationS?: (user: User) => Promise<number>;
  /** With it, a user locked at the limit who has a verified e-mail address is mailed a link that unlocks it. */
  box?: SecretBox;
}

/** The lockout of an instance's users as their organisations' password settings say (max attempts, duration). */
export function lockoutOf(settings: SettingsQueries, instanceId: string, box?: SecretBox): Lockout {
  return {
    instanceId,
    maxAttempts: async (u) => (await passwordRules(settings, instanceId, u.orgId)).maxAttempts,
    lockoutDurationS: async (u) => (await passwordRules(settings, instanceId, u.orgId)).lockoutDurationS,
    ...(box ? { box } : {}),
  };
}

export interface PasswordCheck extends Lockout {
  /** The user as typed at a login page (resolved under the domain settings `settings` holds), or its ID. */
  user: { loginName: string; settings: SettingsQueries } | { userId: string };
  password: string;
  /** Where failures count (src/command/failure-limits.ts): refused without a check while over. */
  limits?: SignInLimits | undefined;
}

/**
 * A password check at login. Every failure looks the same to the caller (unknown user, machine, no password,
 * locked, inactive, inactive organisation, wrong password), so the answer reveals neither whether the user
 * exists nor why it cannot sign in. A wrong password counts toward the lockout; at the limit the user is
 * locked until an administrator unlocks it, or for the lockout settings' lockout_duration. A correct password in
 * an imported or older form is rehashed. Over its failure limits the check is refused before it is tried.
 */
export async function checkPassword(es: EventStore, db: Database, a: PasswordCheck): Promise<User | undefined | TooManyFailures> {
  // The username, or the full login name `<username>@<organisation domain>`.
  const user =
    "userId" in a.user
      ? await db.prisma.user.findFirst({ where: { id: a.user.userId, instanceId: a.instanceId } })
      : await userByLoginName(db.primary, a.instanceId, a.user.loginName, a.user.settings);
  // An unknown name counts under itself, so that the per-account limit answers alike whether the account exists.
  const account = user?.id ?? ("loginName" in a.user ? `name:${a.instanceId}:${a.user.loginName.trim().toLowerCase()}` : a.user.userId);
  return limitedSignIn(a.limits, account, () => checkPasswordOf(es, db, a, user));
}

async function checkPasswordOf(es: EventStore, db: Database, a: PasswordCheck, found: User | null): Promise<User | undefined> {
  if (found?.kind !== "human" || !found.passwordHash) return decoyCheck(a.password);
  let user = found;
  // A temporary lockout whose time is up ends now, and this attempt counts as the first after it.
  if (user.state === "locked" && (await endExpiredLockout(es, { instanceId: a.instanceId, userId: user.id, orgId: user.orgId }))) {
    user = (await db.prisma.user.findUnique({ where: { id: user.id } })) ?? user;
  }
  // A user who may not sign in is not verified at all (the decoy costs the time): nothing can come of it, and a
  // hash stored with a huge cost (security review, finding 3) must not be worked on for a locked account.
  if (user.state !== "active" || !(await usableUserOf(db.primary, user.id))) return decoyCheck(a.password);
  const { valid, rehash } = await verifyPassword(a.password, user.passwordHash!);
  if (!valid) return countFailedCheck(es, a, user, "password");
  const newHash = rehash ? await hashPassword(a.password) : undefined;
  const ref = { aggregateId: user.id, resourceOwner: user.orgId };
  // Decided on fresh state under the user's lock (security review, finding 4): guesses sent in parallel are all
  // verified before any failure is counted, so a right one must not pass once the others have locked the user.
  const { result } = await es.execute(async (w) => {
    await w.lock(a.instanceId, "user", ref.aggregateId);
    const fresh = await w.tx.user.findUnique({ where: { id: ref.aggregateId } });
    // The password set meanwhile (a reset, an administrator) is the one that counts now; the old one proves nothing.
    if (fresh?.state !== "active" || fresh.passwordHash !== user.passwordHash) return undefined;
    await w.push(a.instanceId, fresh.id, [
      ...(fresh.passwordFailures > 0 ? [passwordCheckSucceeded.event(ref)] : []),
      ...(newHash ? [passwordChanged.event(ref, { passwordHash: newHash, changeRequired: fresh.passwordChangeRequired, rehashed: true })] : []),
    ]);
    return fresh;
  });
  return result;
}

/**
 * A wrong password checked elsewhere (at a directory the user's account is linked to): counted toward the
 * account's lockout as a wrong local password is.
 */
export async function countFailedPassword(es: EventStore, db: Database, a: Lockout, userId: string): Promise<void> {
  const user = await db.prisma.user.findFirst({ where: { id: userId, instanceId: a.instanceId } });
  if (user) await countFailedCheck(es, a, user, "password");
}

/** What a failed check counts toward the lockout: its event and the count it raises (each its own, see totp.ts). */
const failedChecks = {
  password: { event: passwordCheckFailed, count: (u: User) => u.passwordFailures },
  totp: { event: totpCheckFailed, count: (u: User) => u.otpFailures },
};

/**
 * A wrong password or TOTP code: counted under the user's lock toward the lockout, and the lock when its count
 * reaches the limit.
 */
export async function countFailedCheck(es: EventStore, a: Lockout, user: User, kind: keyof typeof failedChecks): Promise<undefined> {
  const failed = failedChecks[kind];
  const ref = { aggregateId: user.id, resourceOwner: user.orgId };
  const limit = await a.maxAttempts(user);
  const lockS = (await a.lockoutDurationS?.(user)) ?? 0;
  await es.execute(async (w) => {
    await w.lock(a.instanceId, "user", user.id);
    const fresh = await w.tx.user.findUnique({ where: { id: user.id } });
    if (fresh?.state !== "active") return;
    const lock = limit > 0 && failed.count(fresh) + 1 >= limit;
    const until = lockS > 0 ? { until: new Date(w.clock.now() + lockS * 1000).toISOString() } : {};
    // Only to a verified address: an unverified one may not be the user's, and the link unlocks the account.
    const unlockMail = lock && a.box && fresh.email && fresh.emailVerified ? [{ ...ref, ...codeEvents.unlock(a.box, w.clock.now()) }] : [];
    await w.push(a.instanceId, user.id, [
      failed.event.event(ref),
      ...(lock ? [userLocked.event(ref, { reason: "too many failed password checks", ...until })] : []),
      ...unlockMail,
    ]);
  });
  return undefined;
}

/**
 * Sets a new password (hashed by the caller after the complexity check) proven by the current one, which is
 * checked as at a sign-in (security review of issue 25: a check that counted nothing was a free oracle, also for
 * a caller the privilege ceiling keeps from setting the password): a wrong one counts toward the lockout and the
 * failure limits, a locked user cannot, and over the limits nothing is tried. INVALID_ARGUMENT naming `field`.
 */
export async function changePasswordWithCurrent(
  es: EventStore,
  db: Database,
  a: Lockout & { userId: string; creator: string; currentPassword: string; passwordHash: string; field?: string; limits?: SignInLimits | undefined },
): Promise<ChangeDetails> {
  const proven = await checkPassword(es, db, { ...a, user: { userId: a.userId }, password: a.currentPassword });
  if (isTooManyFailures(proven)) throw errors.resourceExhausted("UCODE-l1m1", `too many failed checks for this user: retry after ${proven.retryAfterS} s`);
  if (proven?.id !== a.userId) throw errors.invalidArgument("UCODE-cur0", `invalid ${a.field ?? "current_password"}: the current password is wrong`);
  return changeHuman(es, a, "a password", () => [passwordChanged.change({ passwordHash: a.passwordHash, changeRequired: false })]);
}
