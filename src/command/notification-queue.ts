import type { Database } from "../storage/database.js";

/** A message the notification worker plans for an event, to queue. */
export interface QueuedMessage {
  /** "<event position>/<message kind>": each event gives each of its messages once. */
  id: string;
  instanceId: string;
  userId: string;
  channel: "mail" | "sms";
  /** The notification's `MessageKind`. */
  kind: string;
  /** The code or link secret, sealed with the master key. */
  sealedCode: string;
  expiresAt: Date;
  /** When the event was appended. */
  createdAt: Date;
  /** When it is first due: when it was queued, on the server's clock (the worker's), which decides what is due. */
  dueAt: Date;
  /**
   * Queued waiting for a provider (src/command/notification-waiting.ts): `WAITING_FOR_PROVIDER` and why, with
   * `dueAt` its expiry. Unset: queued to be sent.
   */
  lastError?: string;
}

/** Queues messages as pending; one already queued (its event redelivered) is left as it is (ON CONFLICT DO NOTHING). */
export async function queueMessages(db: Database, messages: QueuedMessage[]): Promise<void> {
  const data = messages.map(({ sealedCode, dueAt, lastError, ...m }) => ({
    ...m,
    code: sealedCode,
    status: "pending",
    attempts: 0,
    nextAttemptAt: dueAt,
    lastError: lastError ?? "",
  }));
  await db.prisma.notificationMessage.createMany({ data, skipDuplicates: true });
}

/** A pending message whose next attempt is due, claimed for that attempt. */
export interface DueMessage extends Omit<QueuedMessage, "createdAt" | "dueAt"> {
  /** Attempts made before this one. */
  attempts: number;
}

/** What became of an attempt, counting it: the worker decides, the queue records. */
export type AttemptOutcome =
  | { status: "sent"; attempts: number }
  | { status: "failed"; attempts: number; reason: string }
  | { status: "retry"; attempts: number; reason: string; nextAttemptAt: Date };

/**
 * Claims the message due longest and attempts it, in one transaction: the row stays locked (FOR UPDATE SKIP
 * LOCKED) while `attempt` runs, so other processes skip it, and a process that dies mid-attempt rolls back
 * and leaves it pending for the next claim. The outcome is recorded in the same transaction. Undefined when
 * no message is due.
 */
export function attemptDueMessage(
  db: Database,
  now: Date,
  attempt: (m: DueMessage) => Promise<AttemptOutcome>,
  /** Messages not to claim: sent, with their record still to be made (`recordSent`). */
  skip: string[] = [],
): Promise<{ message: DueMessage; outcome: AttemptOutcome } | undefined> {
  return db.prisma.$transaction(
    async (tx) => {
      // The columns under the message's names (the code is stored sealed).
      const [message] = await tx.$queryRaw<DueMessage[]>`
        SELECT id, instance_id AS "instanceId", user_id AS "userId", channel, kind, code AS "sealedCode", expires_at AS "expiresAt", attempts
        FROM notification_messages
        WHERE status = 'pending' AND next_attempt_at <= ${now} AND NOT (id = ANY(${skip}::text[]))
        ORDER BY next_attempt_at LIMIT 1 FOR UPDATE SKIP LOCKED`;
      if (!message) return undefined;
      const outcome = await attempt(message);
      await tx.notificationMessage.update({ where: { id: message.id }, data: outcomeColumns(outcome, now) });
      return { message, outcome };
    },
    // Sending may take a while (SMTP, SMS providers), and the row stays locked meanwhile.
    { maxWait: 10_000, timeout: 120_000 },
  );
}

/**
 * Records a message as sent whose attempt's own record failed (the provider accepted it, then the database went
 * away before the commit). False when it is no longer pending (recorded meanwhile).
 */
export async function recordSent(db: Database, id: string, attempts: number, sentAt: Date): Promise<boolean> {
  const { count } = await db.prisma.notificationMessage.updateMany({
    where: { id, status: "pending" },
    data: outcomeColumns({ status: "sent", attempts }, sentAt),
  });
  return count > 0;
}

/** The columns an outcome changes: a retry stays pending with its next attempt set. */
function outcomeColumns(o: AttemptOutcome, now: Date) {
  switch (o.status) {
    case "sent":
      return { status: "sent", attempts: o.attempts, sentAt: now, lastError: "" };
    case "failed":
      return { status: "failed", attempts: o.attempts, lastError: o.reason };
    case "retry":
      return { attempts: o.attempts, nextAttemptAt: o.nextAttemptAt, lastError: o.reason };
  }
}
