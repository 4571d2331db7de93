import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import tls from "node:tls";
import { readTlsPair, type TlsFiles, TlsPairError } from "../crypto/tls-pair.js";
import { StartupError } from "../config/startup-error.js";
import { type TlsLog, TlsFileWatcher } from "./tls-files.js";

type Handler = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => void;

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/**
 * The most header bytes a request may have, on both protocols: Node's HTTP/1.1 parser limit (16 KiB). On
 * HTTP/2 it is advertised as SETTINGS_MAX_HEADER_LIST_SIZE, which Node enforces (RST_STREAM with
 * ENHANCE_YOUR_CALM) only once the client has acknowledged it; a request sent before that, as the first one
 * usually is, gets 431 from the handler.
 */
export const MAX_HEADER_BYTES = http.maxHeaderSize;
/** Idle time after which a connection without requests is closed, on both protocols. */
const IDLE_MS = 65_000;

/** Statuses for the HTTP/1.1 parser's errors, as Node's default clientError handler answers them. */
const parseErrorStatus: Record<string, number> = { HPE_HEADER_OVERFLOW: 431, HPE_CHUNK_EXTENSIONS_OVERFLOW: 413, ERR_HTTP_REQUEST_TIMEOUT: 408 };

function refusal(status: number, close: boolean): [string, Record<string, string>] {
  const body = `${http.STATUS_CODES[status]!.toLowerCase()}\n`;
  const headers: Record<string, string> = { "content-type": "text/plain; charset=utf-8", "content-length": String(body.length) };
  if (close) headers.connection = "close";
  return [body, headers];
}

/** Answers a request the HTTP/1.1 parser refused, unless a response of the connection has begun, and closes. */
function refuseH1(err: NodeJS.ErrnoException, socket: net.Socket): void {
  // Node's own test for "an answer cannot corrupt the stream" (its default handler is replaced by ours).
  const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || err.code === "ECONNRESET" || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const status = parseErrorStatus[err.code ?? ""] ?? 400;
  const [body, headers] = refusal(status, true);
  const head = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("");
  socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n${head}\r\n${body}`, () => socket.destroy());
  // A peer that never reads its answer does not hold the socket.
  setTimeout(() => socket.destroy(), 5_000).unref();
}

/** The header list size as HTTP/2 counts it (RFC 9113 §6.5.2): name and value octets plus 32 per field. */
function headerListSize(raw: string[]): number {
  let n = 0;
  for (let i = 0; i + 1 < raw.length; i += 2) n += Buffer.byteLength(raw[i]!) + Buffer.byteLength(raw[i + 1]!) + 32;
  return n;
}

/** SVC_TLS_CERT / SVC_TLS_KEY: the port serves TLS; the files are watched while it listens. */
export interface ListenerTls {
  files: TlsFiles;
  log: TlsLog;
  /** How often the files are read besides the directory watch (default 5 s). */
  pollMs?: number;
}

/**
 * One port for every protocol. Node's cleartext HTTP/2 server cannot fall back to HTTP/1.1, so each new
 * connection is sniffed: a client that opens with the HTTP/2 preface (gRPC, h2c prior knowledge) goes to the
 * HTTP/2 server, anything else (REST, gRPC-web, Connect over HTTP/1.1, browsers) to the HTTP/1.1 server.
 * Both hand requests to the same handler (Fastify's).
 *
 * With TLS (SVC_TLS_CERT, SVC_TLS_KEY) every connection is TLS: a `tls.Server` that never listens itself takes
 * each accepted socket through the handshake, and ALPN decides instead of the first bytes: `h2` to the same
 * HTTP/2 server, `http/1.1` or no ALPN to the same HTTP/1.1 server. A changed certificate is set on that
 * `tls.Server` for the connections that follow.
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
  /** With TLS: the handshakes; undefined: cleartext. */
  readonly tls: tls.Server | undefined;
  private readonly tlsWatcher: TlsFileWatcher | undefined;

  constructor(
    handler: Handler,
    private readonly graceMs = 10_000,
    tlsOptions?: ListenerTls,
  ) {
    super({ pauseOnConnect: true });
    if (tlsOptions) {
      let pair: ReturnType<typeof readTlsPair>;
      try {
        pair = readTlsPair(tlsOptions.files);
      } catch (e) {
        // Checked when the configuration was loaded; changed since.
        throw e instanceof TlsPairError ? new StartupError(e.message) : e;
      }
      const server = tls.createServer({ cert: pair.cert, key: pair.key, ALPNProtocols: ["h2", "http/1.1"] });
      server.on("secureConnection", (socket: tls.TLSSocket) => this.routeSecure(socket));
      // A failed handshake concerns that connection only (the socket is destroyed by tls itself).
      server.on("tlsClientError", () => {});
      this.tls = server;
      this.tlsWatcher = new TlsFileWatcher(
        tlsOptions.files,
        pair,
        (next) => server.setSecureContext({ cert: next.cert, key: next.key }),
        tlsOptions.log,
        tlsOptions.pollMs,
      );
      this.once("listening", () => this.tlsWatcher?.start());
    }
    this.h1 = http.createServer(handler as http.RequestListener);
    this.h1.keepAliveTimeout = IDLE_MS;
    this.h2 = http2.createServer({ settings: { maxHeaderListSize: MAX_HEADER_BYTES } }, (req, res) => {
      if (headerListSize(req.rawHeaders) <= MAX_HEADER_BYTES) return handler(req, res);
      const [body, headers] = refusal(431, false);
      res.writeHead(431, headers).end(body);
    });
    const openStreams = new Map<http2.ServerHttp2Session, number>();
    this.h2.on("session", (s) => {
      this.sessions.add(s);
      openStreams.set(s, 0);
      s.on("stream", (stream) => {
        openStreams.set(s, openStreams.get(s)! + 1);
        stream.once("close", () => openStreams.set(s, openStreams.get(s)! - 1));
      });
      s.on("close", () => {
        this.sessions.delete(s);
        openStreams.delete(s);
      });
      if (this.draining) s.close();
    });
    // Idle sessions are closed (GOAWAY), like idle HTTP/1.1 keep-alive connections. This also ends a session
    // nghttp2 has given up on without telling Node: after a header field above its 64 KiB HPACK limit it sends
    // GOAWAY (COMPRESSION_ERROR), and neither reads nor closes the socket again.
    this.h2.setTimeout(IDLE_MS);
    this.h2.on("timeout", (s: http2.ServerHttp2Session) => {
      if (!openStreams.get(s)) s.close();
    });
    // Errors on one connection concern that connection only. A request that cannot be parsed still gets its
    // answer before the connection closes, as from Node's default handler (which listening here replaces).
    this.h1.on("clientError", refuseH1);
    // Node's HTTP server tracks its connections only once it has emitted "listening" (it never listens here):
    // without that, closeIdleConnections() finds nothing to close (a keep-alive connection stayed open to the
    // end of the grace period after SIGTERM), and headersTimeout and requestTimeout are never checked.
    this.once("listening", () => this.h1.emit("listening"));
    this.h2.on("sessionError", () => {});
    this.on("connection", (socket: net.Socket) => this.route(socket));
  }

  private route(socket: net.Socket) {
    this.sockets.add(socket);
    this.undecided.add(socket);
    socket.on("close", () => {
      this.sockets.delete(socket);
      this.undecided.delete(socket);
    });
    socket.on("error", () => socket.destroy());
    if (this.tls) {
      // Undecided until the handshake is done (routeSecure); tls reads the paused socket itself.
      this.tls.emit("connection", socket);
      return;
    }
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

  /** A finished TLS handshake: ALPN chooses the server; the raw socket below closes with the TLS socket. */
  private routeSecure(socket: tls.TLSSocket) {
    const raw = (socket as { _parent?: net.Socket })._parent;
    if (raw) this.undecided.delete(raw);
    if (this.draining) {
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    socket.on("close", () => this.sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    if (socket.alpnProtocol === "h2") this.h2.emit("connection", socket);
    else this.h1.emit("connection", socket);
  }

  override close(cb?: (err?: Error) => void): this {
    this.draining = true;
    this.tlsWatcher?.stop();
    super.close(cb);
    for (const s of this.sessions) s.close();
    for (const socket of this.undecided) socket.destroy();
    // Also stops the timeout checks; the HTTP server itself was never listening, which close() only reports.
    this.h1.close(() => {});
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
