import { SIGNATURE_HEADER, signPayload } from "../actions/caller.js";
import { type HttpSmsConfig, type SmtpConfig, TWILIO_DEFAULT_BASE_URL, type TwilioSmsConfig } from "../domain/notification-providers.js";
import { OutboundFailure, type OutboundHttp } from "../net/outbound-http.js";
import type { UsableProvider } from "../query/notification-providers.js";

/** A message ready to go: text (and HTML for mail) in the recipient's language. */
export interface Mail {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

export interface Sms {
  to: string;
  text: string;
  /** Passed on to an HTTP provider (which may choose a sender per language); Twilio ignores it. */
  language?: string;
}

/** A delivery that failed, with a reason fit for the caller (no secret in it); `permanent`: trying again cannot help. */
export class SendFailure extends Error {
  constructor(
    message: string,
    readonly permanent = false,
  ) {
    super(message);
  }
}

const TIMEOUT_MS = 15_000;

/** The system's default mail server (SVC_SMTP_URL / SVC_SMTP_FROM). */
/** nodemailer, imported at the first mail rather than at every start (docs/drafts/build.md, "Idle memory"). */
async function loadNodemailer() {
  return (await import("nodemailer")).default;
}

export interface SmtpDefault {
  url: string;
  from: string;
}

/**
 * An instance's SMTP server is reached through the outbound client's checks (SVC_TARGET_DENY, for the host as
 * written and after DNS), as its targets and SMS providers are: instance administrators choose these hosts.
 */
async function transportOf(p: SmtpConfig, password: string, outbound: OutboundHttp) {
  const port = p.port || (p.tls === "tls" ? 465 : 587);
  const nodemailer = await loadNodemailer();
  return nodemailer.createTransport({
    host: p.host,
    getSocket: (_options, callback) =>
      outbound.socket(p.host, port, TIMEOUT_MS).then(
        (connection) => callback(null, { connection }),
        (e: Error) => callback(e, undefined as never),
      ),
    port,
    secure: p.tls === "tls",
    requireTLS: p.tls === "starttls",
    // "none": plain SMTP, no STARTTLS even when offered (a relay on the same host or network).
    ignoreTLS: p.tls === "none",
    auth: p.user ? { user: p.user, pass: password } : undefined,
    connectionTimeout: TIMEOUT_MS,
    greetingTimeout: TIMEOUT_MS,
    socketTimeout: TIMEOUT_MS,
  });
}

/** An SMTP 5xx answer is permanent (the address or the message is refused); anything else may pass later. */
function failure(e: unknown, what: string): SendFailure {
  const msg = (e as Error)?.message ?? String(e);
  const code = (e as { responseCode?: number })?.responseCode;
  return new SendFailure(`${what}: ${msg.replace(/\s+/g, " ").slice(0, 300)}`, code !== undefined && code >= 500 && code < 600);
}

/** Sends through an instance's SMTP provider. */
export async function sendMailVia(p: UsableProvider, mail: Mail, outbound: OutboundHttp): Promise<void> {
  const c = p.config as SmtpConfig;
  const t = await transportOf(c, p.secret, outbound);
  try {
    await t.sendMail({
      from: c.senderName ? { name: c.senderName, address: c.senderAddress } : c.senderAddress,
      replyTo: c.replyToAddress || undefined,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
    });
  } catch (e) {
    throw failure(e, "the SMTP server refused or could not be reached");
  } finally {
    t.close();
  }
}

/** Sends through the system default mail server. */
export async function sendMailViaDefault(d: SmtpDefault, mail: Mail): Promise<void> {
  const u = new URL(d.url);
  const secure = u.protocol === "smtps:";
  const nodemailer = await loadNodemailer();
  const t = nodemailer.createTransport({
    host: u.hostname.replace(/^\[|\]$/g, ""),
    port: u.port ? Number(u.port) : secure ? 465 : 587,
    secure,
    auth: u.username ? { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } : undefined,
    connectionTimeout: TIMEOUT_MS,
    greetingTimeout: TIMEOUT_MS,
    socketTimeout: TIMEOUT_MS,
  });
  try {
    await t.sendMail({ from: d.from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html });
  } catch (e) {
    throw failure(e, "the default SMTP server refused or could not be reached");
  } finally {
    t.close();
  }
}

/** A POST through the checked outbound client (SVC_TARGET_DENY, no redirects); a failure is a SendFailure naming `what`. */
async function post(http: OutboundHttp, url: string, headers: Record<string, string>, body: string, what: string): Promise<void> {
  let status: number;
  try {
    ({ status } = await http.request(url, {
      method: "POST",
      headers: { ...headers, "content-length": Buffer.byteLength(body) },
      body,
      timeoutMs: TIMEOUT_MS,
      maxBytes: 64 * 1024,
    }));
  } catch (e) {
    if (e instanceof OutboundFailure) throw new SendFailure(`${what} ${e.message}`);
    throw e;
  }
  // 4xx (but 408 and 429): the request is refused as it is; 5xx and those may pass later.
  if (status < 200 || status > 299) {
    throw new SendFailure(`${what} answered HTTP ${status}`, status >= 400 && status < 500 && status !== 408 && status !== 429);
  }
}

/**
 * Generic HTTP provider: POST `{"recipient", "text", "language"}` as JSON, signed like targets
 * (`svc-signature: t=<unix>,v1=<hex HMAC-SHA256(key, "<t>.<body>")>`).
 * Twilio: POST {base}/2010-04-01/Accounts/{sid}/Messages.json, form `To`, `From`, `Body`, basic auth sid:token.
 */
export async function sendSmsVia(p: UsableProvider, sms: Sms, http: OutboundHttp): Promise<void> {
  if (p.providerType === "http") {
    const c = p.config as HttpSmsConfig;
    const body = JSON.stringify({ recipient: sms.to, text: sms.text, language: sms.language ?? "" });
    await post(http, c.url, { "content-type": "application/json", [SIGNATURE_HEADER]: signPayload(p.secret, body) }, body, "the SMS provider");
    return;
  }
  const c = p.config as TwilioSmsConfig;
  const base = (c.baseUrl || TWILIO_DEFAULT_BASE_URL).replace(/\/+$/, "");
  const url = `${base}/2010-04-01/Accounts/${encodeURIComponent(c.sid)}/Messages.json`;
  await post(
    http,
    url,
    { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${Buffer.from(`${c.sid}:${p.secret}`).toString("base64")}` },
    new URLSearchParams({ To: sms.to, From: c.senderNumber, Body: sms.text }).toString(),
    "Twilio",
  );
}
