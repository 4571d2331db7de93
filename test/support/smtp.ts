import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

export interface ReceivedMail {
  from: string;
  to: string[];
  user: string | undefined;
  raw: string;
}

/** A real SMTP server on loopback (no TLS); it records what it receives and, with `users`, checks AUTH PLAIN/LOGIN. */
export class MailServer {
  received: ReceivedMail[] = [];
  port = 0;
  private server?: SMTPServer;
  /** Set to make the next deliveries fail with a 4xx/5xx answer. */
  refuse: number | undefined;
  /** While true, a message's data is taken but not answered; it counts only if its client is still there after. */
  hold = false;
  /** Messages waiting in `hold`. */
  held = 0;
  private readonly closed = new Set<string>();
  /** Milliseconds before each answer (slow server). */
  delayMs = 0;
  /** Called once a message is complete, just before it is accepted. */
  beforeAccept: (() => void) | undefined;

  constructor(private readonly users?: Record<string, string>) {}

  async start(): Promise<this> {
    this.server = new SMTPServer({
      disabledCommands: this.users ? ["STARTTLS"] : ["STARTTLS", "AUTH"],
      allowInsecureAuth: true,
      authOptional: !this.users,
      logger: false,
      onAuth: (auth, _session, cb) => {
        if (this.users && this.users[auth.username ?? ""] === auth.password) cb(null, { user: auth.username });
        else cb(new Error("invalid credentials"));
      },
      onClose: (session) => {
        this.closed.add(session.id);
      },
      onData: (stream, session, cb) => {
        let raw = "";
        stream.on("data", (c: Buffer) => (raw += c.toString("utf8")));
        stream.on("end", async () => {
          if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
          if (this.hold) {
            this.held++;
            const gone = () => this.closed.has(session.id);
            while (this.hold && !gone()) await new Promise((r) => setTimeout(r, 20));
            this.held--;
            if (gone()) return cb(new Error("client gone"));
          }
          if (this.refuse) {
            const err = Object.assign(new Error("try later"), { responseCode: this.refuse });
            return cb(err);
          }
          this.beforeAccept?.();
          this.received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
            to: session.envelope.rcptTo.map((r) => r.address),
            user: session.user as string | undefined,
            raw,
          });
          cb();
        });
      },
    });
    await new Promise<void>((ok) => this.server!.listen(0, "127.0.0.1", ok));
    this.port = ((this.server as unknown as { server: { address(): AddressInfo } }).server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((ok) => (this.server ? this.server.close(() => ok()) : ok()));
  }

  async waitFor(n: number, timeoutMs = 10_000): Promise<ReceivedMail[]> {
    const end = Date.now() + timeoutMs;
    while (this.received.length < n) {
      if (Date.now() > end) throw new Error(`mail server got ${this.received.length} messages, expected ${n}`);
      await new Promise((ok) => setTimeout(ok, 20));
    }
    return this.received;
  }
}

/** A received message's text with its quoted-printable parts decoded (UTF-8). */
export function decodedMail(raw: string): string {
  return Buffer.from(
    raw.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_, h) => String.fromCharCode(Number.parseInt(h, 16))),
    "latin1",
  ).toString("utf8");
}

/** The first link to `path` in a received message, as path and query (to open against the test server's URL). */
export function linkIn(raw: string, path: string): string {
  const m = new RegExp(`https?://[^/\\s"<]+(${path.replace(/\//g, "\\/")}\\?[^\\s"<]+)`).exec(decodedMail(raw));
  if (!m) throw new Error(`no link to ${path} in the message`);
  return m[1]!.replace(/&amp;/g, "&");
}
