/** SMTP and SMS providers as commands store them and queries read them; secrets are kept apart (sealed). */
export type SmtpTlsMode = "none" | "starttls" | "tls";

export interface SmtpConfig {
  host: string;
  port: number;
  tls: SmtpTlsMode;
  user: string;
  senderAddress: string;
  senderName: string;
  replyToAddress: string;
}

export interface HttpSmsConfig {
  url: string;
}

export interface TwilioSmsConfig {
  sid: string;
  senderNumber: string;
  baseUrl: string;
}

export type ProviderKind = "smtp" | "sms";
export type ProviderType = "smtp" | "http" | "twilio";
export type ProviderConfig = SmtpConfig | HttpSmsConfig | TwilioSmsConfig;

/** What an `added` event stores: `secret` sealed with the master key ("" when none). */
export interface ProviderFields {
  kind: ProviderKind;
  providerType: ProviderType;
  description: string;
  config: ProviderConfig;
  secret: string;
}

export const TWILIO_DEFAULT_BASE_URL = "https://api.twilio.com";
