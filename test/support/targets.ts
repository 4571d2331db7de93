import { createHmac, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { rest } from "./clients.js";

export interface Received {
  body: any;
  raw: string;
  signature: string | undefined;
  at: number;
}

export type Behaviour = (r: Received) => { status?: number; body?: unknown; raw?: string; delayMs?: number } | undefined;

/** Verifies `svc-signature: t=<unix>,v1=<hex HMAC-SHA256(key, "<t>.<body>")>` as a receiving server would. */
export function verifySignature(key: string, header: string | undefined, raw: string, toleranceSec = 300): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? "");
  if (!m) return false;
  if (Math.abs(Date.now() / 1000 - Number(m[1])) > toleranceSec) return false;
  const expected = createHmac("sha256", key).update(`${m[1]}.${raw}`).digest();
  return timingSafeEqual(expected, Buffer.from(m[2]!, "hex"));
}

/** A real HTTP server on loopback acting as an execution target; it records what it receives. */
export class TargetServer {
  received: Received[] = [];
  private server?: http.Server;
  port = 0;

  /** While down, connections are cut as they come: the port stays this server's (a restart on it could find it taken). */
  private isDown = false;

  constructor(public behaviour: Behaviour = () => {}) {}

  get url() {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async start(port = 0): Promise<this> {
    this.server = http.createServer((req, res) => {
      let raw = "";
      req.on("data", (c) => (raw += c));
      req.on("end", async () => {
        let body: unknown;
        try {
          body = JSON.parse(raw);
        } catch {
          body = undefined;
        }
        const r: Received = { body, raw, signature: req.headers["svc-signature"] as string | undefined, at: Date.now() };
        this.received.push(r);
        const out = this.behaviour(r) ?? {};
        if (out.delayMs) await new Promise((ok) => setTimeout(ok, out.delayMs));
        if (res.destroyed) return;
        res.writeHead(out.status ?? 200, { "content-type": "application/json" });
        res.end(out.raw ?? JSON.stringify(out.body ?? {}));
      });
    });
    this.server.on("connection", (socket) => this.isDown && socket.destroy());
    await new Promise<void>((ok) => this.server!.listen(port, "127.0.0.1", ok));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** The target goes down: calls in progress and kept-alive connections are cut, new ones too, until `up`. */
  down(): void {
    this.isDown = true;
    this.server?.closeAllConnections();
  }

  up(): void {
    this.isDown = false;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((ok) => (this.server ? this.server.close(() => ok()) : ok()));
    this.server = undefined;
  }

  async waitFor(n: number, timeoutMs = 10_000): Promise<Received[]> {
    const end = Date.now() + timeoutMs;
    while (this.received.length < n) {
      if (Date.now() > end) throw new Error(`target got ${this.received.length} calls, expected ${n}`);
      await new Promise((ok) => setTimeout(ok, 20));
    }
    return this.received;
  }
}

/**
 * A REST webhook target at `receiverUrl` and an event execution that calls it for every `event` (e.g.
 * "org.org.added"), made through the API of the server at `url`.
 */
export async function webhookOnEvent(url: string, token: string, event: string, receiverUrl: string, name = "webhook"): Promise<void> {
  const target = await rest(url, "POST", "/resources/v3alpha/targets", { token, body: { name, restWebhook: { url: receiverUrl }, timeout: "2s" } });
  if (target.status !== 201) throw new Error(`target: ${target.status} ${JSON.stringify(target.body)}`);
  const execution = await rest(url, "POST", "/resources/v3alpha/executions", {
    token,
    body: { condition: { event: { event } }, targets: [target.body.details.id] },
  });
  if (execution.status >= 300) throw new Error(`execution: ${execution.status} ${JSON.stringify(execution.body)}`);
}
