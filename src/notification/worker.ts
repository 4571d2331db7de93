import type { SecretBox } from "../crypto/secrets.js";
import {
  type emailCodeAdded,
  notificationMessageFailed,
  type passwordCodeAdded,
  type otpEmailCodeAdded,
  type otpSmsCodeAdded,
  type phoneCodeAdded,
  type unlockCodeAdded,
  type userDomainClaimed,
} from "../command/events.js";
import type { EventStore, StoredEvent } from "../eventstore/eventstore.js";
import { inheritanceChain } from "../domain/contexts.js";
import type { SettingsQueries } from "../query/settings.js";
import type { Database } from "../storage/database.js";
import type { Channels } from "./channels.js";
import { type MessageKind, renderMessage } from "./messages.js";
import { SendFailure } from "./senders.js";

export interface Logger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/** Counted in plain numbers; the metrics read them at a scrape (`svc_notifications_total`). */
export interface NotificationStats {
  sent: number;
  retried: number;
  failed: number;
}

export interface NotificationWorker {
  stats: NotificationStats;
  stop(): Promise<void>;
  /** Resolves once every message of the events committed before the call was handled (tests). */
  idle(): Promise<void>;
}

type CodePayload = { code: string; expiresAt: string; reason?: "init" | "reset"; returned?: boolean };
type Planned = { kind: MessageKind; channel: "mail" | "sms" };

/** The messages of an event, if any: the events that ask for a code to be sent. */
function plan(e: StoredEvent): Planned[] {
  // A code returned to an API caller is the caller's to send.
  if ((e.payload as Partial<CodePayload>).returned) return [];
  switch (e.type) {
    case "user.email.code_added" satisfies typeof emailCodeAdded.type:
      return [{ kind: "verifyEmail", channel: "mail" }];
    case "user.phone.code_added" satisfies typeof phoneCodeAdded.type:
      return [{ kind: "verifyPhone", channel: "sms" }];
    case "user.password.code_added" satisfies typeof passwordCodeAdded.type:
      return [{ kind: (e.payload as CodePayload).reason === "init" ? "initPassword" : "resetPassword", channel: "mail" }];
    case "user.unlock.code_added" satisfies typeof unlockCodeAdded.type:
      return [{ kind: "unlockUser", channel: "mail" }];
    case "user.otp_email.code_added" satisfies typeof otpEmailCodeAdded.type:
      return [{ kind: "otpEmail", channel: "mail" }];
    case "user.otp_sms.code_added" satisfies typeof otpSmsCodeAdded.type:
      return [{ kind: "otpSms", channel: "sms" }];
    case "user.domain.claimed" satisfies typeof userDomainClaimed.type:
      return [{ kind: "domainClaimed", channel: "mail" }];
    default:
      return [];
  }
}

/** Back-off between attempts: 1 s doubling, at most 5 min apart; given up after 12 attempts (about 20 min). */
export const messageRetry = { firstDelayMs: 1000, maxDelayMs: 300_000, maxAttempts: 12 };
const delayAfter = (attempts: number) => Math.min(messageRetry.maxDelayMs, messageRetry.firstDelayMs * 2 ** (attempts - 1));

/** The paths of the login UI's pages a message links to. */
const linkPaths: Record<MessageKind, string> = {
  verifyEmail: "/ui/login/email/verify",
  verifyPhone: "",
  initPassword: "/ui/login/password/init",
  resetPassword: "/ui/login/password/reset",
  unlockUser: "/ui/login/unlock",
  otpEmail: "",
  otpSms: "",
  domainClaimed: "",
};

interface Row {
  id: string;
  instance_id: string;
  user_id: string;
  channel: string;
  kind: string;
  code: string;
  expires_at: Date;
  attempts: number;
}

/**
 * The notification worker. A durable subscription ("notifications") turns each event that asks for a message
 * into a row of `notification_messages` whose ID is "<position>/<kind>": a redelivered event inserts nothing
 * (ON CONFLICT DO NOTHING), so each event gives each message once. Delivery claims one due row at a time in
 * a transaction (FOR UPDATE SKIP LOCKED) and keeps it locked while sending, then marks it sent in the same
 * transaction: another process skips it, and a process that dies mid-delivery leaves it unsent and unlocked
 * (its connection closes, the transaction rolls back) for the next claim. At least once: a crash after the
 * provider accepted and before the commit repeats the message, the only window left. A failure is retried with
 * back-off; a permanent one (5xx from SMTP, 4xx from an SMS provider) or the last attempt marks it failed and
 * appends `notification.message.failed`.
 */
export function startNotificationWorker(deps: {
  db: Database;
  es: EventStore;
  box: SecretBox;
  channels: Channels;
  log: Logger;
  /** The text settings: a context's custom message texts. */
  settings: SettingsQueries;
  link: { secure: boolean; port: number };
  pollMs?: number;
}): NotificationWorker {
  const { db, es, box, channels, log } = deps;
  const stats: NotificationStats = { sent: 0, retried: 0, failed: 0 };
  let stopped = false;
  let wake: (() => void) | undefined;
  let busy = false;

  const subscription = es.subscribe(
    "notifications",
    async (events) => {
      const rows = events.flatMap((e) =>
        plan(e).map((p) => {
          const payload = e.payload as CodePayload;
          // A domain claim carries no code: the new username takes its place (sealed as codes are), for 30 days.
          const claimed = p.kind === "domainClaimed" ? (e.payload as { username: string }).username : undefined;
          return {
            id: `${e.position}/${p.kind}`,
            instanceId: e.instanceId,
            userId: e.aggregateId,
            channel: p.channel,
            kind: p.kind,
            code: claimed !== undefined ? box.seal(claimed) : payload.code,
            expiresAt: claimed !== undefined ? new Date(e.createdAt.getTime() + 30 * 86_400_000) : new Date(payload.expiresAt),
            status: "pending",
            attempts: 0,
            nextAttemptAt: e.createdAt,
            lastError: "",
            createdAt: e.createdAt,
          };
        }),
      );
      if (rows.length) {
        await db.prisma.notificationMessage.createMany({ data: rows, skipDuplicates: true });
        wake?.();
      }
    },
    // Only events that plan a message are wanted: the cursor moves past the others without a write each time.
    {
      batchSize: 100,
      filter: (e) => plan(e).length > 0,
      onError: (err) => log.warn({ reason: (err as Error).message }, "notifications: reading the log failed"),
    },
  );

  const render = async (r: Row) => {
    const user = await db.prisma.user.findFirst({ where: { id: r.user_id, instanceId: r.instance_id } });
    if (!user) throw new SendFailure("the user no longer exists", true);
    // Links point at the instance's primary domain.
    const instance = await db.prisma.instance.findUnique({ where: { id: r.instance_id }, select: { primaryDomain: true } });
    const kind = r.kind as MessageKind;
    const code = box.open(r.code);
    const defaultPort = deps.link.secure ? 443 : 80;
    const base = `${deps.link.secure ? "https" : "http"}://${instance?.primaryDomain ?? "localhost"}${deps.link.port === defaultPort ? "" : `:${deps.link.port}`}`;
    const link = linkPaths[kind] ? `${base}${linkPaths[kind]}?${new URLSearchParams({ userId: user.id, code })}` : "";
    const minutes = String(Math.max(1, Math.round((r.expires_at.getTime() - Date.now()) / 60_000)));
    const name = user.givenName || user.displayName || user.loginName;
    // The texts and branding of the user's organisation (inherited from the instance and the system).
    const chain = inheritanceChain({ type: "org", instanceId: r.instance_id, orgId: user.orgId });
    const [texts, branding] = await Promise.all([deps.settings.values("text", chain), deps.settings.values("branding", chain)]);
    const vars = { name, code, link, minutes, ...(kind === "domainClaimed" ? { username: code } : {}) };
    const m = renderMessage(kind, user.preferredLanguage ?? "en", vars, texts, branding.primary_color);
    return { user, m };
  };

  const send = async (r: Row) => {
    const { user, m } = await render(r);
    if (r.channel === "mail") {
      if (!user.email) throw new SendFailure("the user has no e-mail address", true);
      await channels.mail(r.instance_id, { to: user.email, subject: m.subject, text: m.text, html: m.html });
    } else {
      if (!user.phone) throw new SendFailure("the user has no phone number", true);
      await channels.sms(r.instance_id, { to: user.phone, text: m.text, language: m.language });
    }
  };

  /** Claims and delivers one due message; false when none is due. */
  const deliverOne = async (): Promise<boolean> => {
    let failedEvent: { row: Row; reason: string; attempts: number } | undefined;
    const found = await db.prisma.$transaction(
      async (tx) => {
        const rows = await tx.$queryRaw<Row[]>`
          SELECT id, instance_id, user_id, channel, kind, code, expires_at, attempts FROM notification_messages
          WHERE status = 'pending' AND next_attempt_at <= now() ORDER BY next_attempt_at LIMIT 1 FOR UPDATE SKIP LOCKED`;
        const r = rows[0];
        if (!r) return false;
        const attempts = r.attempts + 1;
        try {
          if (r.expires_at.getTime() <= Date.now()) throw new SendFailure("the code expired before it could be sent", true);
          await send(r);
          await tx.notificationMessage.update({ where: { id: r.id }, data: { status: "sent", attempts, sentAt: new Date(), lastError: "" } });
          stats.sent++;
        } catch (err) {
          const reason = (err as Error).message ?? String(err);
          const permanent = err instanceof SendFailure && err.permanent;
          if (permanent || attempts >= messageRetry.maxAttempts) {
            await tx.notificationMessage.update({ where: { id: r.id }, data: { status: "failed", attempts, lastError: reason } });
            failedEvent = { row: r, reason, attempts };
            stats.failed++;
          } else {
            const nextAttemptAt = new Date(Date.now() + delayAfter(attempts));
            await tx.notificationMessage.update({ where: { id: r.id }, data: { attempts, nextAttemptAt, lastError: reason } });
            stats.retried++;
            log.warn({ message: r.id, kind: r.kind, attempts, reason }, "notification not sent, will retry");
          }
        }
        return true;
      },
      { maxWait: 10_000, timeout: 120_000 },
    );
    if (failedEvent) {
      const { row, reason, attempts } = failedEvent;
      log.warn({ message: row.id, kind: row.kind, attempts, reason }, "notification given up");
      await es.execute(async (w) => {
        await w.push(row.instance_id, "system", [
          notificationMessageFailed.event(
            { aggregateId: row.id, resourceOwner: row.instance_id },
            { userId: row.user_id, channel: row.channel, kind: row.kind, attempts, reason },
          ),
        ]);
      });
    }
    return found;
  };

  let loop: Promise<void> = Promise.resolve();
  const run = async () => {
    while (!stopped) {
      busy = true;
      let more = false;
      try {
        more = await deliverOne();
      } catch (err) {
        log.warn({ reason: (err as Error).message }, "notifications: delivery pass failed");
      }
      busy = false;
      if (more) continue;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, deps.pollMs ?? 500);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      wake = undefined;
    }
  };
  loop = run();

  return {
    stats,
    async stop() {
      stopped = true;
      wake?.();
      await subscription.stop();
      await loop;
    },
    async idle() {
      await subscription.caughtUp();
      for (;;) {
        const due = await db.prisma.notificationMessage.count({ where: { status: "pending", nextAttemptAt: { lte: new Date() } } });
        if (!due && !busy) return;
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}
