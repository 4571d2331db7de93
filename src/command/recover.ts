import { join } from "node:path";
import { hashPassword } from "../crypto/password.js";
import { StartupError } from "../config/startup-error.js";
import type { EventStore } from "../eventstore/eventstore.js";
import { userByLoginName } from "../query/users.js";
import type { Database } from "../storage/database.js";
import { embeddedUrlOf } from "../storage/embedded.js";
import { firstInstanceId, generatePassword } from "./setup.js";
import { addPersonalAccessToken, changeUserState, setPassword } from "./users.js";

/** The creator recorded on the recovery's events: an operator at the database, not a user. */
export const RECOVERY_CREATOR = "SYSTEM:recover";

export interface Recovered {
  instanceId: string;
  userId: string;
  kind: string;
  /** The user was locked and is unlocked now. */
  unlocked: boolean;
  /** A service user's new PAT (returned once). */
  pat?: string;
  /** A human user's new generated password (to be changed at the next sign-in). */
  password?: string;
}

/**
 * The instance a recovery without `--instance` acts on: the first instance (setup.ts), never the oldest there is:
 * once the first instance is deleted, or when a tenant's instance carries an older creation time, the oldest is a
 * tenant's, whose users the operator did not name (security review #23).
 */
async function firstInstance(db: Database) {
  const id = await firstInstanceId(db.prisma);
  if (!id) throw new StartupError("the database holds no instance yet");
  const instance = await db.prisma.instance.findUnique({ where: { id } });
  if (!instance) throw new StartupError(`the first instance (${id}) was deleted: name the instance with --instance (an ID or one of its domains)`);
  return instance;
}

/**
 * Operator recovery for the day the admin's password and the PAT are both lost (issue 14): with access to the
 * database and no token, unlock a user, give a service user a new PAT, and (asked for) give a human user a
 * generated password that must be changed at the next sign-in. Written as events like any change, so the
 * audit trail shows it (creator `SYSTEM:recover`) and the running servers' caches drop what changed (NOTIFY).
 */
export async function recoverUser(es: EventStore, db: Database, a: { user: string; instance?: string | undefined; newPassword: boolean }): Promise<Recovered> {
  const instance = a.instance
    ? ((await db.prisma.instance.findUnique({ where: { id: a.instance } })) ??
      (await db.prisma.instanceDomain
        .findUnique({ where: { domain: a.instance.toLowerCase() } })
        .then((d) => (d ? db.prisma.instance.findUnique({ where: { id: d.instanceId } }) : null))))
    : await firstInstance(db);
  if (!instance) throw new StartupError(`--instance ${a.instance}: no such instance (an ID or one of its domains)`);
  const byId = await db.prisma.user.findUnique({ where: { id: a.user } });
  const user = byId?.instanceId === instance.id ? byId : await userByLoginName(db, instance.id, a.user);
  if (!user) throw new StartupError(`--user ${a.user}: no such user in instance ${instance.id} (a login name or a user ID)`);
  const ref = { instanceId: instance.id, id: user.id, creator: RECOVERY_CREATOR };
  const out: Recovered = { instanceId: instance.id, userId: user.id, kind: user.kind, unlocked: false };
  if (user.state === "locked") {
    await changeUserState(es, { ...ref, action: "unlock" });
    out.unlocked = true;
  }
  if (user.kind === "machine") {
    out.pat = (await addPersonalAccessToken(es, { ...ref, expiresAt: null })).token;
  } else if (a.newPassword) {
    const password = generatePassword();
    await setPassword(es, { ...ref, passwordHash: await hashPassword(password), changeRequired: true });
    out.password = password;
  }
  return out;
}

/**
 * The URL of the embedded PostgreSQL server a running process owns in `dataDir`, or undefined when none
 * answers there. The running server holds the data directory (a second owner is refused), but its server
 * listens on a unix socket with trust authentication for this machine's user, so the recovery connects to it
 * as a client, where `src/storage/embedded.ts` says the socket is.
 */
export function runningEmbeddedUrl(dataDir: string): string | undefined {
  return embeddedUrlOf(join(dataDir, "pg"));
}
