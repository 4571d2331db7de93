// SMTP and SMS providers of the instance the console runs in (NotificationProviderService): search, create, change,
// activate/deactivate, delete, and a test message through a provider. The service acts in the Host header's
// instance: the console's own.
import type { AreaProps } from "../areas";
import { match } from "../router";
import { ProviderLists } from "./notifications/list";
import { SmsCreate, SmsItem } from "./notifications/sms";
import { SmtpCreate, SmtpItem } from "./notifications/smtp";

export default function Notifications({ path }: AreaProps) {
  let m = match("/:kind/new", path);
  if (m?.kind === "smtp") return <SmtpCreate />;
  if (m?.kind === "sms") return <SmsCreate />;
  m = match("/:kind/:id", path);
  if (m?.kind === "smtp") return <SmtpItem id={m.id!} />;
  if (m?.kind === "sms") return <SmsItem id={m.id!} />;
  return <ProviderLists />;
}
