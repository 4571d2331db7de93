import type { User } from "../../gen/prisma/client.js";
import { hashPassword, verifyPassword } from "../crypto/password.js";
import type { EventStore } from "../eventstore/eventstore.js";
import type { SettingsQueries } from "../query/settings.js";
import { userByLoginName } from "../query/users.js";
import type { Database } from "../storage/database.js";
import type { SecretBox } from "../crypto/secrets.js";
import { endExpiredLockout } from "./lockouts.js";
import { codeEvents } from "./user-codes.js";
import { passwordChanged, passwordCheckFailed, passwordCheckSucceeded, userLocked } from "./events.js";

/** Verified against when there is no user, so that an unknown login name costs the same time as a wrong password. */
let decoy: Promise<string> | undefined;

/**
 * A password check at login. Every failure looks the same to the caller (unknown user, machine, no password,
 * locked, inactive, inactive organisation, wrong password), so the answer reveals neither whether the user
 * exists nor why it cannot sign in. A wrong password counts toward the lockout; at the limit the user is
 * locked until an administrator unlocks it, or for the lockout settings' lockout_duration. A correct password in an imported or older form is rehashed.
 */
export async function checkPassword(
  es: EventStore,
  db: Database,
  a: {
    instanceId: string;
    /** The user as typed at a login page (resolved under the domain settings `settings` holds), or its ID. */
    user: { loginName: string; settings: SettingsQueries } | { userId: string };
    password: string;
    maxAttempts: (user: User) => Promise<number>;
    /** Seconds a lock at the limit lasts; 0 or absent: until an administrator unlocks (the permanent lockout). */
    lockoutDurationS?: (user: User) => Promise<number>;
    /** With it, a user locked at the limit who has a verified e-mail address is mailed a link that unlocks it. */
    box?: SecretBox;
  },
): Promise<User | undefined> {
  // The username, or the full login name `<username>@<organisation domain>`.
  let user =
    "userId" in a.user
      ? await db.prisma.user.findFirst({ where: { id: a.user.userId, instanceId: a.instanceId } })
      : await userByLoginName(db, a.instanceId, a.user.loginName, a.user.settings);
  if (user?.kind !== "human" || !user.passwordHash) {
    decoy ??= hashPassword("decoy password");
    await verifyPassword(a.password, await decoy);
    return undefined;
  }
  const { valid, rehash } = await verifyPassword(a.password, user.passwordHash);
  // A temporary lockout whose time is up ends now, and this attempt counts as the first after it.
  if (user.state === "locked" && (await endExpiredLockout(es, { instanceId: a.instanceId, userId: user.id, orgId: user.orgId }))) {
    user = (await db.prisma.user.findUnique({ where: { id: user.id } })) ?? user;
  }
  if (user.state !== "active") return undefined;
  const checked = user;
  const org = await db.prisma.org.findUnique({ where: { id: user.orgId }, select: { state: true } });
  if (org?.state !== "active") return undefined;
  const ref = { aggregateId: user.id, resourceOwner: user.orgId };
  if (!valid) {
    const limit = await a.maxAttempts(user);
    const lockS = (await a.lockoutDurationS?.(user)) ?? 0;
    await es.execute(async (w) => {
      await w.lock(a.instanceId, "user", checked.id);
      const fresh = await w.tx.user.findUnique({ where: { id: checked.id } });
      if (fresh?.state !== "active") return;
      const lock = limit > 0 && fresh.passwordFailures + 1 >= limit;
      const until = lockS > 0 ? { until: new Date(Date.now() + lockS * 1000).toISOString() } : {};
      // Only to a verified address: an unverified one may not be the user's, and the link unlocks the account.
      const unlockMail = lock && a.box && fresh.email && fresh.emailVerified ? [{ ...ref, ...codeEvents.unlock(a.box) }] : [];
      await w.push(a.instanceId, checked.id, [
        passwordCheckFailed.event(ref),
        ...(lock ? [userLocked.event(ref, { reason: "too many failed password checks", ...until })] : []),
        ...unlockMail,
      ]);
    });
    return undefined;
  }
  const newHash = rehash ? await hashPassword(a.password) : undefined;
  if (user.passwordFailures > 0 || newHash) {
    await es.execute((w) =>
      w.push(a.instanceId, user.id, [
        ...(user.passwordFailures > 0 ? [passwordCheckSucceeded.event(ref)] : []),
        ...(newHash ? [passwordChanged.event(ref, { passwordHash: newHash, changeRequired: user.passwordChangeRequired, rehashed: true })] : []),
      ]),
    );
  }
  return user;
}
