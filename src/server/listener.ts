import http from "node:http";
import http2 from "node:http2";
import net from "node:net";

type Handler = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => void;

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/**
 * One port for every protocol. Node's cleartext HTTP/2 server cannot fall back to HTTP/1.1, so each new
 * connection is sniffed: a client that opens with the HTTP/2 preface (gRPC, h2c prior knowledge) goes to the
 * HTTP/2 server, anything else (REST, gRPC-web, Connect over HTTP/1.1, browsers) to the HTTP/1.1 server.
 * Both hand requests to the same handler (Fastify's).
 *
 * close() stops accepting, lets in-flight requests and streams finish, closes idle connections as they
 * become idle, and destroys what is left after the grace period.
 */
export class DualProtocolServer extends net.Server {
  readonly h1: http.Server;
  readonly h2: http2.Http2Server;
  private readonly sockets = new Set<net.Socket>();
  /** Connections that have not sent a byte yet: nothing to finish on close. */
  private readonly undecided = new Set<net.Socket>();
  private readonly sessions = new Set<http2.ServerHttp2Session>();
  private draining = false;

  constructor(
    handler: Handler,
    private readonly graceMs = 10_000,
  ) {
    super({ pauseOnConnect: true });
    this.h1 = http.createServer(handler as http.RequestListener);
    this.h1.keepAliveTimeout = 65_000;
    this.h2 = http2.createServer({}, handler as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void);
    this.h2.on("session", (s) => {
      this.sessions.add(s);
      s.on("close", () => this.sessions.delete(s));
      if (this.draining) s.close();
    });
    // Errors on one connection concern that connection only.
    this.h1.on("clientError", (_err, socket) => socket.destroy());
    this.h2.on("sessionError", () => {});
    this.on("connection", (socket: net.Socket) => this.route(socket));
  }

  private route(socket: net.Socket) {
    this.sockets.add(socket);
    this.undecided.add(socket);
    socket.on("close", () => (this.sockets.delete(socket), this.undecided.delete(socket)));
    socket.on("error", () => socket.destroy());
    let seen = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk]);
      const n = Math.min(seen.length, PREFACE.length);
      const isH2 = seen.subarray(0, n).equals(PREFACE.subarray(0, n));
      // Undecided while the bytes so far are a prefix of the preface (and not yet the whole of it).
      if (isH2 && n < PREFACE.length) return;
      socket.off("data", onData);
      this.undecided.delete(socket);
      socket.pause();
      socket.unshift(seen);
      // The HTTP/2 session takes the bytes already read from the socket's buffer when it attaches, which
      // may be a tick later: resuming here would let them flow away unread.
      if (isH2) this.h2.emit("connection", socket);
      else {
        this.h1.emit("connection", socket);
        socket.resume();
      }
    };
    socket.on("data", onData);
    socket.resume();
  }

  override close(cb?: (err?: Error) => void): this {
    this.draining = true;
    super.close(cb);
    for (const s of this.sessions) s.close();
    for (const socket of this.undecided) socket.destroy();
    this.h1.closeIdleConnections();
    const idle = setInterval(() => this.h1.closeIdleConnections(), 50);
    const force = setTimeout(() => {
      for (const s of this.sessions) s.destroy();
      for (const socket of this.sockets) socket.destroy();
    }, this.graceMs);
    force.unref();
    this.once("close", () => {
      clearInterval(idle);
      clearTimeout(force);
    });
    return this;
  }
}
