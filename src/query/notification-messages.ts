import type { Database } from "../storage/database.js";

/** How many queued messages (`command/notification-queue.ts`) are pending and due. */
export function countDueMessages(db: Database, now: Date): Promise<number> {
  return db.prisma.notificationMessage.count({ where: { status: "pending", nextAttemptAt: { lte: now } } });
}

/** What a message needs of the user it goes to: where to send it, how to greet, in which language and organisation's texts. */
export interface Recipient {
  id: string;
  orgId: string;
  loginName: string;
  displayName: string;
  givenName: string | null;
  preferredLanguage: string | null;
  email: string | null;
  phone: string | null;
}

/** The user of the instance a message goes to; null once it is gone. */
export function recipientOf(db: Database, instanceId: string, userId: string): Promise<Recipient | null> {
  return db.prisma.user.findFirst({
    where: { id: userId, instanceId },
    select: { id: true, orgId: true, loginName: true, displayName: true, givenName: true, preferredLanguage: true, email: true, phone: true },
  });
}

/** The instance's primary domain, which links in messages point at; undefined before one is set. */
export async function primaryDomainOf(db: Database, instanceId: string): Promise<string | undefined> {
  const instance = await db.prisma.instance.findUnique({ where: { id: instanceId }, select: { primaryDomain: true } });
  return instance?.primaryDomain ?? undefined;
}
