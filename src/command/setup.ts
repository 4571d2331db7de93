import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Config } from "../config/config.js";
import { hashPassword } from "../crypto/password.js";
import { StartupError } from "../config/startup-error.js";
import type { EventStore, EventWriter, Tx } from "../eventstore/eventstore.js";
import { newId } from "../ids.js";
import { SYSTEM_CREATOR } from "../domain/system.js";
import { instanceAdded, instanceDomainAdded, instanceDomainPrimarySet } from "../events/index.js";
import { ensureConsoleApps } from "./console-app.js";
import { newInstanceEvents } from "./instances.js";
import { memberEvent } from "./users.js";

export interface FirstInstance {
  created: boolean;
  instanceId: string;
  /** Only on the start that created it. */
  pat?: string;
  /** Only on the start that created it, when it generated the admin's password: the file it is in. */
  passwordFile?: string;
}

/**
 * A password nobody knows: 144 random bits in base64url, and one character of each class so that any
 * complexity policy an operator sets before the first sign-in still accepts it. The admin must change it at
 * the first sign-in (passwordChangeRequired), like a configured one.
 */
export function generatePassword(): string {
  return `${randomBytes(18).toString("base64url")}-Aa1`;
}

function writeSecretFile(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content, { mode: 0o600 });
  // writeFileSync's mode applies only to a new file (and through the umask): an old file keeps its mode
  chmodSync(path, 0o600);
}

/**
 * The first start creates the first instance with its domains, its default organisation, a human admin
 * and a service user (both IAM_OWNER, and SYSTEM_OWNER because whoever installs the server owns it), turns
 * on the preview API flags, and writes the service user's PAT to a file. Later starts find the instance
 * and change nothing but a new external domain. All of it is one transaction: a crash leaves nothing half
 * made. Callers hold the set-up lock, so processes starting together on an empty database create it once.
 */
/**
 * A trial on localhost moves to its real domain by restarting with a new SVC_EXTERNAL_DOMAIN: the domain is
 * added to the first instance (the old ones stay, so links and tokens already out keep working).
 */
async function addExternalDomain(w: EventWriter, instance: { id: string; primaryDomain: string | null }, domain: string): Promise<void> {
  const ref = { aggregateId: instance.id, resourceOwner: instance.id };
  const owner = await w.tx.instanceDomain.findUnique({ where: { domain } });
  if (owner && owner.instanceId !== instance.id)
    throw new StartupError(`SVC_EXTERNAL_DOMAIN ${domain} is a domain of another instance (${owner.instanceId}), not of the first one`);
  // A new external domain is where the operator moved the instance: it becomes primary (mail links use it).
  // An instance without a primary domain (made before there was one) gets it too.
  await w.push(instance.id, SYSTEM_CREATOR, [
    ...(owner ? [] : [instanceDomainAdded.event(ref, { domain })]),
    ...(!owner || instance.primaryDomain === null ? [instanceDomainPrimarySet.event(ref, { domain })] : []),
  ]);
}

/**
 * The first instance's ID: the one a first start made (its creation's creator is SYSTEM), not the oldest instance
 * there is (a tenant's may carry an older time, and the first may have been deleted: its creation event stays in the
 * log). Undefined before any first start.
 */
export async function firstInstanceId(tx: Pick<Tx, "event">): Promise<string | undefined> {
  const first = await tx.event.findFirst({
    where: { type: instanceAdded.type, creator: SYSTEM_CREATOR },
    orderBy: { position: "asc" },
    select: { aggregateId: true },
  });
  return first?.aggregateId;
}

export async function ensureFirstInstance(es: EventStore, config: Config): Promise<FirstInstance> {
  // No documented default: whoever reached the login page first would own the instance (issue 14).
  const generated = config.firstInstanceAdminPassword === undefined ? generatePassword() : undefined;
  const passwordHash = await hashPassword(config.firstInstanceAdminPassword ?? generated!);
  const { result } = await es.execute(async (w): Promise<{ created: boolean; instanceId: string; token?: string }> => {
    // An instance of the system API never receives SVC_EXTERNAL_DOMAIN, and a first instance its owner deleted is
    // not made again (its creation event stays in the log).
    const first = await firstInstanceId(w.tx);
    if (first) {
      const existing = await w.tx.instance.findUnique({ where: { id: first } });
      if (existing) await addExternalDomain(w, existing, config.externalDomain.toLowerCase());
      await ensureConsoleApps(w);
      return { created: false, instanceId: first };
    }
    const instanceId = newId();
    const made = newInstanceEvents(instanceId, {
      name: "First instance",
      domains: [...new Set([config.externalDomain.toLowerCase(), "localhost", "127.0.0.1"])],
      orgName: config.firstInstanceOrgName,
      admins: [
        { kind: "human", username: config.firstInstanceAdminUsername, passwordHash, passwordChangeRequired: true },
        { kind: "machine", username: "admin-service", name: "First instance service user" },
      ],
    });
    await w.push(instanceId, SYSTEM_CREATOR, made.events);
    await w.push(
      "",
      SYSTEM_CREATOR,
      made.adminIds.map((userId) => memberEvent("system", "", userId, ["SYSTEM_OWNER"])),
    );
    return { created: true, instanceId, token: made.pats[0] };
  });
  if (!result.created) return { created: false, instanceId: result.instanceId };
  writeSecretFile(config.firstInstancePatPath, `${result.token}\n`);
  if (generated) writeSecretFile(config.firstInstancePasswordPath, `${generated}\n`);
  return { created: true, instanceId: result.instanceId, pat: result.token!, ...(generated ? { passwordFile: config.firstInstancePasswordPath } : {}) };
}
