import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { TargetAddressPolicy } from "../../src/domain/target-addresses.js";
import { OutboundHttp } from "../../src/net/outbound-http.js";

/**
 * The kept-alive connections of outbound calls (targets, SMS providers, external identity providers) against a
 * server that closes idle connections, as every server does after its own timeout: the next call must neither
 * fail nor be sent twice. A raw TCP server plays the peer, so that what it does with each connection is exact.
 */

interface Peer {
  port: number;
  /** Every request line and body the peer answered, in order. */
  answered: string[];
  connections: number;
  /** Resolves when a connection is closed by the client. */
  clientClosed: Promise<void>;
  close(): Promise<void>;
}

/**
 * A peer that answers each connection's first request (with `headers` added) and resets the connection when a
 * second request arrives on it: the moment a server's idle timeout and the client's next request cross.
 */
async function startPeer(headers = ""): Promise<Peer> {
  let closedByClient!: () => void;
  const sockets = new Set<net.Socket>();
  const peer: Peer = {
    port: 0,
    answered: [],
    connections: 0,
    clientClosed: new Promise((ok) => (closedByClient = ok)),
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((ok) => server.close(() => ok()));
    },
  };
  const server = net.createServer((socket) => {
    peer.connections++;
    sockets.add(socket);
    let served = false;
    let data = "";
    socket.on("end", () => closedByClient());
    socket.on("close", () => sockets.delete(socket));
    socket.on("data", (chunk) => {
      if (served) {
        socket.resetAndDestroy();
        return;
      }
      data += chunk.toString("latin1");
      const head = data.indexOf("\r\n\r\n");
      const length = Number(/content-length: (\d+)/i.exec(data.slice(0, head))?.[1] ?? 0);
      if (head < 0 || data.length < head + 4 + length) return;
      served = true;
      peer.answered.push(`${data.slice(0, data.indexOf("\r\n"))} ${data.slice(head + 4)}`.trim());
      socket.write(`HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: keep-alive\r\n${headers}\r\nok`);
    });
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  peer.port = (server.address() as net.AddressInfo).port;
  return peer;
}

describe("outbound HTTP's kept-alive connections", () => {
  let out: OutboundHttp;
  let peer: Peer;
  afterEach(async () => {
    out.close();
    await peer.close();
  });

  const limits = { timeoutMs: 5_000, maxBytes: 1_000 };
  /** A peer, a client, and one GET answered on a connection the client keeps: the next request goes out on it. */
  async function keptConnection(path: string): Promise<string> {
    peer = await startPeer();
    out = new OutboundHttp(new TargetAddressPolicy("none"));
    const url = `http://127.0.0.1:${peer.port}${path}`;
    expect((await out.request(url, { method: "GET", ...limits })).text).toBe("ok");
    return url;
  }

  it("send a GET again, once, on a fresh connection when the kept one was closed as it went out", async () => {
    const url = await keptConnection("/user");
    expect(await out.request(url, { method: "GET", ...limits })).toMatchObject({ status: 200, text: "ok" });
    // The reset connection's request was never answered; the fresh one's was.
    expect(peer.answered).toEqual(["GET /user HTTP/1.1", "GET /user HTTP/1.1"]);
    expect(peer.connections).toBe(2);
  });

  it("never send a POST twice: a reset after it went out fails it", async () => {
    const url = await keptConnection("/token");
    const post = { method: "POST" as const, body: "code=abc", headers: { "content-type": "application/x-www-form-urlencoded" }, ...limits };
    // The peer read the whole request before it reset the connection: it may have acted on it.
    await expect(out.request(url, post)).rejects.toThrow(/unreachable/);
    expect(peer.connections).toBe(1);
  });

  it("close an idle connection before the server's announced keep-alive timeout", async () => {
    peer = await startPeer("Keep-Alive: timeout=2\r\n");
    out = new OutboundHttp(new TargetAddressPolicy("none"));
    const answeredAt = Date.now();
    await out.request(`http://127.0.0.1:${peer.port}/`, { method: "GET", ...limits });
    // Node's agent drops it a second before the hint; without an agent timeout it would keep it for good.
    const gone = await Promise.race([peer.clientClosed.then(() => Date.now() - answeredAt), new Promise<number>((ok) => setTimeout(() => ok(-1), 4_000))]);
    expect(gone).toBeGreaterThan(0);
    expect(gone).toBeLessThan(2_000);
  });
});
