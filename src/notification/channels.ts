import type { OutboundHttp } from "../net/outbound-http.js";
import type { NotificationProviderQueries } from "../query/notification-providers.js";
import { type Mail, SendFailure, type SmtpDefault, type Sms, sendMailVia, sendMailViaDefault, sendSmsVia } from "./senders.js";

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

  async mail(instanceId: string, mail: Mail): Promise<void> {
    const p = await this.providers.active(instanceId, "smtp");
    if (p) return sendMailVia(p, mail, this.http);
    if (this.smtpDefault) return sendMailViaDefault(this.smtpDefault, mail);
    throw new SendFailure("no SMTP provider is active and no default (SVC_SMTP_URL) is configured");
  }

  async sms(instanceId: string, sms: Sms): Promise<void> {
    const p = await this.providers.active(instanceId, "sms");
    if (!p) throw new SendFailure("no SMS provider is active");
    return sendSmsVia(p, sms, this.http);
  }
}
