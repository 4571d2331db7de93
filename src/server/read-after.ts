import type { OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { Http2ServerResponse } from "node:http2";
import { encodeEnvelope } from "@connectrpc/connect/protocol";
import * as connectProtocol from "@connectrpc/connect/protocol-connect";
import * as grpcProtocol from "@connectrpc/connect/protocol-grpc";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { errors } from "../errors/errors.js";
import { sendConnectError } from "../http/json-edge.js";
import type { Database } from "../storage/database.js";
import { walPositionOf, walText } from "../storage/replica.js";
import { cookiesOf } from "../web/browser.js";

/**
 * Read-your-writes across machines (issue 32). A process reads from a replica only what it knows committed
 * (`src/storage/reads.ts`, its fence), and hears of other processes' commits by their NOTIFY, which can arrive after
 * the caller's next request. So every answer says this process's fence in `X-Svc-Read-After`, and a request that
 * carries it to another machine (the header, or the browser's cookie) reads nothing older there. A browser gets
 * the cookie when the fence moved while its request ran (`Sec-Fetch-Mode` tells a browser: every engine sends it),
 * so the console and the login UI carry it without code of theirs. Nothing is added without replicas: every read is
 * then the primary's. docs/decisions.md, "Read replicas".
 */
export const READ_AFTER_HEADER = "X-Svc-Read-After";
const HEADER = READ_AFTER_HEADER.toLowerCase();

/** The browser's copy of the header: `__Host-` over https, as the login UI's cookies. */
export const readAfterCookieName = (secure: boolean) => (secure ? "__Host-svc_read_after" : "svc_read_after");

const REFUSAL = `${READ_AFTER_HEADER} must be a WAL position as an answer's ${READ_AFTER_HEADER} said it, such as 0/16B3748`;

export function registerReadAfter(app: FastifyInstance, db: Pick<Database, "readPosition" | "readAfter">, secure: boolean): void {
  if (db.readPosition() === undefined) return;
  const cookieName = readAfterCookieName(secure);
  const cookieAttributes = `; Path=/; HttpOnly; SameSite=Lax${secure ? "; Secure" : ""}`;
  app.addHook("onRequest", (req, reply, done) => {
    const header = req.headers[HEADER];
    const said = header === undefined ? -1n : typeof header === "string" ? walPositionOf(header.trim()) : undefined;
    if (said === undefined) {
      refuse(req, reply);
      return;
    }
    // The server wrote the cookie: one that is not a position is old or was tampered with, and is only ignored.
    const cookie = (req.headers.cookie === undefined ? undefined : walPositionOf(cookiesOf(req)[cookieName] ?? "")) ?? -1n;
    const carried = said > cookie ? said : cookie;
    if (carried >= 0n) db.readAfter(carried);
    // What a browser has already: its cookie, or what this process knew as its request began.
    const known = req.headers["sec-fetch-mode"] === undefined ? undefined : larger(cookie, db.readPosition()!);
    sayOnAnswer(reply.raw as ServerResponse, () => {
      // Never lower than what was carried: the fence takes a carried position only once the primary has answered
      // (`ReadRouter.readAfter`), and a request that reads nothing through the router does not wait for that.
      const position = larger(db.readPosition()!, carried);
      const text = walText(position);
      if (known === undefined || position <= known) return { [HEADER]: text };
      return { [HEADER]: text, "set-cookie": `${cookieName}=${text}${cookieAttributes}` };
    });
    done();
  });
}

const larger = (a: bigint, b: bigint) => (a > b ? a : b);

/**
 * Adds `headers()` to the answer as its head is written, when the fence covers what the request committed:
 * Fastify and connect-node both write the head with `writeHead` and headers of their own, which win over ones
 * set earlier, so they are added there (a cookie beside the route's own).
 */
function sayOnAnswer(res: ServerResponse, headers: () => OutgoingHttpHeaders): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    const at = typeof args[1] === "string" ? 2 : 1;
    const given = args[at];
    // Fastify's headers object is the reply's own and connect-node's is made for this answer: added to in place.
    const into: OutgoingHttpHeaders = given && typeof given === "object" && !Array.isArray(given) ? (given as OutgoingHttpHeaders) : {};
    for (const [name, value] of Object.entries(headers())) {
      if (name !== "set-cookie") into[name] = value;
      else into[name] = [...toList(into[name] ?? res.getHeader(name)), value as string];
    }
    if (Array.isArray(given)) for (const [name, value] of Object.entries(into)) (given as unknown[]).push(name, value);
    else args[at] = into;
    return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as typeof res.writeHead;
}

function toList(value: OutgoingHttpHeaders[string]): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [String(value)];
}

/**
 * A header that is not a position: INVALID_ARGUMENT in the caller's protocol (gRPC's trailers, a Connect stream's
 * end message, Connect's JSON error, else the status object).
 */
function refuse(req: FastifyRequest, reply: FastifyReply) {
  const type = req.headers["content-type"] ?? "";
  const error = errors.invalidArgument("REPL-t0kn", REFUSAL);
  if (type.startsWith("application/grpc")) {
    const trailer = new Headers({ "content-type": type.split(";")[0]! });
    grpcProtocol.setTrailerStatus(trailer, error);
    const fields = Object.fromEntries(trailer);
    const raw = reply.raw as ServerResponse | Http2ServerResponse;
    if (!("stream" in raw)) return reply.status(200).headers(fields).send();
    // gRPC's trailers-only answer: one HEADERS frame that ends the stream (Fastify would send an empty DATA frame after it).
    reply.hijack();
    raw.stream.respond({ ":status": 200, ...fields }, { endStream: true });
    return reply;
  }
  // A Connect stream's error is its end-of-stream message, under 200: a client reads a 400 as INTERNAL.
  if (connectProtocol.contentTypeStreamRegExp.test(type)) {
    const end = new TextEncoder().encode(JSON.stringify(connectProtocol.endStreamToJson(new Headers(), error, undefined)));
    return reply
      .status(200)
      .header("content-type", type)
      .send(Buffer.from(encodeEnvelope(connectProtocol.endStreamFlag, end)));
  }
  if (req.headers["connect-protocol-version"] !== undefined)
    return reply.status(400).header("content-type", "application/json").send(connectProtocol.errorToJson(error, undefined));
  return sendConnectError(reply, error);
}
