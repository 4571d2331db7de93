import type { SecretBox } from "../crypto/secrets.js";
import { isEventOf } from "../eventstore/definition.js";
import {
  emailCodeAdded,
  notificationMessageFailed,
  notificationProviderActivated,
  notificationProviderAdded,
  notificationProviderChanged,
  otpEmailCodeAdded,
  otpSmsCodeAdded,
  passwordCodeAdded,
  phoneCodeAdded,
  unlockCodeAdded,
  userDomainClaimed,
} from "../events/index.js";
import { type AttemptOutcome, attemptDueMessage, type DueMessage, type QueuedMessage, queueMessages, recordSent } from "../command/notification-queue.js";
import type { EventStore, StoredEvent } from "../eventstore/eventstore.js";
import { inheritanceChain } from "../domain/contexts.js";
import { countDueMessages, primaryDomainOf, recipientOf } from "../query/notification-messages.js";
import type { SettingsQueries } from "../query/settings.js";
import type { Database } from "../storage/database.js";
import { WAITING_FOR_PROVIDER, wakeWaitingMessages } from "../command/notification-waiting.js";
import { type Channels, NoProvider } from "./channels.js";
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

/** A message an event asks for, and its secret: a sealed code, or (a domain claim) the new username, to seal. */
type Planned = { kind: MessageKind; channel: "mail" | "sms" } & ({ sealedCode: string; expiresAt: string } | { username: string });

/** The messages of an event, if any: the events that ask for a code to be sent. */
function plan(e: StoredEvent): Planned[] {
  const code = (kind: MessageKind, channel: Planned["channel"], p: { code: string; expiresAt: string; returned?: boolean }): Planned[] =>
    // A code returned to an API caller is the caller's to send.
    p.returned ? [] : [{ kind, channel, sealedCode: p.code, expiresAt: p.expiresAt }];
  if (isEventOf(emailCodeAdded, e)) return code("verifyEmail", "mail", e.payload);
  if (isEventOf(phoneCodeAdded, e)) return code("verifyPhone", "sms", e.payload);
  if (isEventOf(passwordCodeAdded, e)) return code(e.payload.reason === "init" ? "initPassword" : "resetPassword", "mail", e.payload);
  if (isEventOf(unlockCodeAdded, e)) return code("unlockUser", "mail", e.payload);
  if (isEventOf(otpEmailCodeAdded, e)) return code("otpEmail", "mail", e.payload);
  if (isEventOf(otpSmsCodeAdded, e)) return code("otpSms", "sms", e.payload);
  if (isEventOf(userDomainClaimed, e)) return [{ kind: "domainClaimed", channel: "mail", username: e.payload.username }];
  return [];
}

/** An event after which an instance may have a provider it lacked: its waiting messages are tried again. */
const mayAddProvider = (e: StoredEvent) =>
  isEventOf(notificationProviderActivated, e) || isEventOf(notificationProviderAdded, e) || isEventOf(notificationProviderChanged, e);

/**
 * Warnings of one cause folded: the first of a key is logged, the same again within `windowMs` (on the worker's
 * clock) only counted, and the next one after that carries the count (`folded`). A mail server down for an hour
 * is then a line a minute per instance and reason, not one per message and retry.
 */
export class FoldedWarnings {
  private readonly seen = new Map<string, { since: number; folded: number }>();

  constructor(
    private readonly log: Logger,
    private readonly now: () => number,
    private readonly windowMs = 60_000,
  ) {}

  warn(key: string, obj: object, msg: string): void {
    const t = this.now();
    const last = this.seen.get(key);
    if (last && t - last.since < this.windowMs) {
      last.folded++;
      return;
    }
    // Keys name instances and reasons: bounded, but not by this class; forgetting them all now and then is enough.
    if (this.seen.size >= 10_000) this.seen.clear();
    this.seen.set(key, { since: t, folded: 0 });
    this.log.warn(last?.folded ? { ...obj, folded: last.folded } : obj, msg);
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

/**
 * The notification worker. A durable subscription ("notifications") turns each event that asks for a message
 * into a row of `notification_messages` whose ID is "<position>/<kind>": a redelivered event inserts nothing
 * (ON CONFLICT DO NOTHING), so each event gives each message once. Delivery claims one due row at a time in
 * a transaction (FOR UPDATE SKIP LOCKED) and keeps it locked while sending, then marks it sent in the same
 * transaction: another process skips it, and a process that dies mid-delivery leaves it unsent and unlocked
 * (its connection closes, the transaction rolls back) for the next claim. A database that goes away after the
 * provider accepted and before the commit leaves it pending too: the worker remembers it, claims it no more and
 * records it once the database is back. At least once: only a crash of the process in that window repeats it. A failure is retried with
 * back-off; a permanent one (5xx from SMTP, 4xx from an SMS provider) or the last attempt marks it failed and
 * appends `notification.message.failed`. A channel without a provider is no failure of the message: it waits,
 * its attempts unspent, until a provider is added, activated or changed (the same subscription wakes it) or it
 * expires, and the worker warns once per instance and channel. A message whose channel has no provider when it is
 * queued is queued waiting: no delivery claims it until then (issue 31: one claim each was what a mass creation of
 * users left the server busy with). Repeated warnings of one cause are folded.
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
  // The server's clock (the event store's): back-off, expiry and what is due are decided on it, so tests move it.
  const now = () => es.clock.now();
  const stats: NotificationStats = { sent: 0, retried: 0, failed: 0 };
  let stopped = false;
  let wake: (() => void) | undefined;
  let busy = false;
  const folded = new FoldedWarnings(log, now);
  /** "<instance>/<channel>" of the channels found without a provider: warned once, until a provider is found. */
  const waiting = new Set<string>();

  const queued = (e: StoredEvent, p: Planned): QueuedMessage => ({
    id: `${e.position}/${p.kind}`,
    instanceId: e.instanceId,
    userId: e.aggregateId,
    channel: p.channel,
    kind: p.kind,
    // A domain claim carries no code: the new username takes its place (sealed as codes are), for 30 days.
    ...("username" in p
      ? { sealedCode: box.seal(p.username), expiresAt: new Date(e.createdAt.getTime() + 30 * 86_400_000) }
      : { sealedCode: p.sealedCode, expiresAt: new Date(p.expiresAt) }),
    createdAt: e.createdAt,
    dueAt: new Date(now()),
  });

  /** The one warning of an instance's channel without a provider (again only after a message of it was sent). */
  const warnWaiting = (instanceId: string, channel: "mail" | "sms", reason: string) => {
    const key = `${instanceId}/${channel}`;
    if (waiting.has(key)) return;
    waiting.add(key);
    log.warn({ instanceId, channel, reason }, `no ${channel === "mail" ? "SMTP" : "SMS"} provider: messages wait until one is configured`);
  };

  /**
   * Messages of a channel without a provider are queued waiting (due at their expiry, marked as waiting): no
   * delivery claims them until a provider's event wakes them (below). Asked once per instance and channel and
   * batch (of the primary where the cache has no provider): a provider committed after this check comes in a
   * later batch, after these rows exist.
   */
  const queueWaitingOrDue = async (messages: QueuedMessage[]) => {
    const missing = new Map<string, NoProvider | undefined>();
    for (const m of messages) {
      const key = `${m.instanceId}/${m.channel}`;
      if (!missing.has(key)) missing.set(key, await channels.missing(m.instanceId, m.channel));
      const lack = missing.get(key);
      if (lack) Object.assign(m, { dueAt: m.expiresAt, lastError: `${WAITING_FOR_PROVIDER}${lack.message}` });
    }
    await queueMessages(db, messages);
    for (const [key, lack] of missing) {
      if (!lack) continue;
      const [instanceId, channel] = key.split("/") as [string, "mail" | "sms"];
      warnWaiting(instanceId, channel, lack.message);
    }
    return messages.some((m) => !m.lastError);
  };

  const subscription = es.subscribe(
    "notifications",
    async (events) => {
      const messages = events.flatMap((e) => plan(e).map((p) => queued(e, p)));
      const due = messages.length ? await queueWaitingOrDue(messages) : false;
      // A provider added, activated or changed: the instance's messages waiting for one are due now (an activation
      // or change does not name its kind: both channels; one still without a provider waits again, unwarned).
      // The warning of a channel stays given until a message of it is sent.
      const toWake = new Set<string>();
      for (const e of events.filter(mayAddProvider)) {
        const kind = isEventOf(notificationProviderAdded, e) ? e.payload.kind : undefined;
        if (kind !== "sms") toWake.add(`${e.instanceId}/mail`);
        if (kind !== "smtp") toWake.add(`${e.instanceId}/sms`);
      }
      let woken = 0;
      for (const key of toWake) {
        const [instanceId, channel] = key.split("/") as [string, "mail" | "sms"];
        woken += await wakeWaitingMessages(db, new Date(now()), channel, instanceId);
      }
      if (due || woken) wake?.();
    },
    // Only events that plan a message or may add a provider are wanted: the cursor moves past the others without a write each time.
    {
      batchSize: 100,
      filter: (e) => plan(e).length > 0 || mayAddProvider(e),
      onError: (err) => log.warn({ reason: (err as Error).message }, "notifications: reading the log failed"),
    },
  );

  const render = async (m: DueMessage) => {
    const user = await recipientOf(db, m.instanceId, m.userId);
    if (!user) throw new SendFailure("the user no longer exists", true);
    // Links point at the instance's primary domain.
    const domain = await primaryDomainOf(db, m.instanceId);
    const kind = m.kind as MessageKind;
    const code = box.open(m.sealedCode);
    const defaultPort = deps.link.secure ? 443 : 80;
    const base = `${deps.link.secure ? "https" : "http"}://${domain ?? "localhost"}${deps.link.port === defaultPort ? "" : `:${deps.link.port}`}`;
    const link = linkPaths[kind] ? `${base}${linkPaths[kind]}?${new URLSearchParams({ userId: user.id, code })}` : "";
    const minutes = String(Math.max(1, Math.round((m.expiresAt.getTime() - now()) / 60_000)));
    const name = user.givenName || user.displayName || user.loginName;
    // The texts and branding of the user's organisation (inherited from the instance and the system).
    const chain = inheritanceChain({ type: "org", instanceId: m.instanceId, orgId: user.orgId });
    const [texts, branding] = await Promise.all([deps.settings.values("text", chain), deps.settings.values("branding", chain)]);
    const vars = { name, code, link, minutes, ...(kind === "domainClaimed" ? { username: code } : {}) };
    return { user, message: renderMessage(kind, user.preferredLanguage ?? "en", vars, texts, branding.primary_color) };
  };

  const send = async (m: DueMessage) => {
    // Without a provider nothing is rendered: the message waits for one.
    const missing = await channels.missing(m.instanceId, m.channel);
    if (missing) throw missing;
    const { user, message } = await render(m);
    if (m.channel === "mail") {
      if (!user.email) throw new SendFailure("the user has no e-mail address", true);
      await channels.mail(m.instanceId, { to: user.email, subject: message.subject, text: message.text, html: message.html });
    } else {
      if (!user.phone) throw new SendFailure("the user has no phone number", true);
      await channels.sms(m.instanceId, { to: user.phone, text: message.text, language: message.language });
    }
  };

  /** Sends a claimed message and decides what became of it: sent, retried later with back-off, or given up. */
  const attempt = async (m: DueMessage): Promise<AttemptOutcome> => {
    const attempts = m.attempts + 1;
    try {
      if (m.expiresAt.getTime() <= now()) throw new SendFailure("the code expired before it could be sent", true);
      await send(m);
      return { status: "sent", attempts };
    } catch (err) {
      const reason = (err as Error).message ?? String(err);
      // No provider: not an attempt. The message waits, its attempts unspent, until a provider is configured
      // (the subscription above makes it due again) or it expires.
      if (err instanceof NoProvider) return { status: "retry", attempts: m.attempts, reason: `${WAITING_FOR_PROVIDER}${reason}`, nextAttemptAt: m.expiresAt };
      const permanent = err instanceof SendFailure && err.permanent;
      if (permanent || attempts >= messageRetry.maxAttempts) return { status: "failed", attempts, reason };
      return { status: "retry", attempts, reason, nextAttemptAt: new Date(now() + delayAfter(attempts)) };
    }
  };

  /**
   * Messages a provider accepted whose record was lost with the transaction (the database went away before the
   * commit, which left them pending): not claimed again, and recorded as sent once the database is back.
   */
  const unrecorded = new Map<string, { attempts: number; sentAt: Date }>();
  const attemptNoting = async (m: DueMessage): Promise<AttemptOutcome> => {
    const outcome = await attempt(m);
    if (outcome.status === "sent") unrecorded.set(m.id, { attempts: outcome.attempts, sentAt: new Date(now()) });
    return outcome;
  };
  const recordUnrecorded = async () => {
    for (const [id, { attempts, sentAt }] of unrecorded) {
      if (await recordSent(db, id, attempts, sentAt)) stats.sent++;
      unrecorded.delete(id);
    }
  };

  /** Claims and delivers one due message; false when none is due. */
  const deliverOne = async (): Promise<boolean> => {
    if (unrecorded.size) await recordUnrecorded();
    const claimed = await attemptDueMessage(db, new Date(now()), attemptNoting, [...unrecorded.keys()]);
    if (!claimed) return false;
    unrecorded.delete(claimed.message.id);
    const { message: m, outcome } = claimed;
    const channelKey = `${m.instanceId}/${m.channel}`;
    switch (outcome.status) {
      case "sent":
        stats.sent++;
        waiting.delete(channelKey);
        break;
      case "retry":
        if (outcome.reason.startsWith(WAITING_FOR_PROVIDER)) {
          // One warning per instance and channel, not one per message.
          warnWaiting(m.instanceId, m.channel, outcome.reason.slice(WAITING_FOR_PROVIDER.length));
          break;
        }
        stats.retried++;
        folded.warn(
          `retry|${channelKey}|${outcome.reason}`,
          { message: m.id, instanceId: m.instanceId, kind: m.kind, attempts: outcome.attempts, reason: outcome.reason },
          "notification not sent, will retry",
        );
        break;
      case "failed": {
        stats.failed++;
        const { attempts, reason } = outcome;
        folded.warn(`failed|${channelKey}|${reason}`, { message: m.id, instanceId: m.instanceId, kind: m.kind, attempts, reason }, "notification given up");
        await es.execute(async (w) => {
          await w.push(m.instanceId, "system", [
            notificationMessageFailed.event(
              { aggregateId: m.id, resourceOwner: m.instanceId },
              { userId: m.userId, channel: m.channel, kind: m.kind, attempts, reason },
            ),
          ]);
        });
      }
    }
    return true;
  };

  let loop: Promise<void> = Promise.resolve();
  const run = async () => {
    // A default mail server (SVC_SMTP_URL) configured since the last start: the mail that waited goes out.
    if (channels.hasMailDefault) {
      await wakeWaitingMessages(db, new Date(now()), "mail").catch((err: unknown) =>
        log.warn({ reason: (err as Error).message }, "notifications: waking the messages that wait for a provider failed"),
      );
    }
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
        const due = await countDueMessages(db, new Date(now()));
        if (!due && !busy) return;
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}
