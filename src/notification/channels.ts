import type { OutboundHttp } from "../net/outbound-http.js";
import type { NotificationProviderQueries } from "../query/notification-providers.js";
import { type Mail, SendFailure, type SmtpDefault, type Sms, sendMailVia, sendMailViaDefault, sendSmsVia } from "./senders.js";

/** No way to send on a channel: not a refusal of this message, messages wait until a provider is configured. */
export class NoProvider extends SendFailure {
  constructor(
    message: string,
    readonly channel: "mail" | "sms",
  ) {
    super(message);
  }
}

/** What each channel lacks when nothing can send on it (one wording, for the check before rendering and the send). */
const noMail = () => new NoProvider("no SMTP provider is active and no default (SVC_SMTP_URL) is configured", "mail");
const noSms = () => new NoProvider("no SMS provider is active", "sms");

/**
 * Where an instance's messages go: its active SMTP provider, else the system default (SVC_SMTP_URL /
 * SVC_SMTP_FROM); its active SMS provider. No way to send is a SendFailure like a refused delivery.
 */
export class Channels {
  constructor(
    private readonly providers: NotificationProviderQueries,
    private readonly smtpDefault: SmtpDefault | undefined,
    private readonly http: OutboundHttp,
  ) {}

  /**
   * The instance's active provider of a kind: the cache's, or where the cache has none, the primary's. A provider
   * another process configured a moment ago may not have reached this process's cache (its NOTIFY) or a replica
   * yet, and a message must not wait until it expires for one that exists.
   */
  private async provider(instanceId: string, kind: "smtp" | "sms") {
    return (await this.providers.active(instanceId, kind)) ?? (await this.providers.activeOnPrimary(instanceId, kind));
  }

  /** Why the instance cannot send on a channel now (no active provider, for mail no default either), or undefined. */
  async missing(instanceId: string, channel: "mail" | "sms"): Promise<NoProvider | undefined> {
    if (channel === "mail" && this.smtpDefault) return undefined;
    if (await this.provider(instanceId, channel === "mail" ? "smtp" : "sms")) return undefined;
    return channel === "mail" ? noMail() : noSms();
  }

  /** Whether mail goes out without an instance's provider (SVC_SMTP_URL). */
  get hasMailDefault(): boolean {
    return this.smtpDefault !== undefined;
  }

  async mail(instanceId: string, mail: Mail): Promise<void> {
    const p = await this.provider(instanceId, "smtp");
    if (p) return sendMailVia(p, mail, this.http);
    if (this.smtpDefault) return sendMailViaDefault(this.smtpDefault, mail);
    throw noMail();
  }

  async sms(instanceId: string, sms: Sms): Promise<void> {
    const p = await this.provider(instanceId, "sms");
    if (!p) throw noSms();
    return sendSmsVia(p, sms, this.http);
  }
}
