import http from "node:http";
import * as grpc from "@grpc/grpc-js";
import { type DescMessage, type DescMethod, type DescService, fromBinary, toBinary, type MessageShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";

export type Protocol = "grpc" | "grpc-web" | "connect-h1" | "connect-h2";
export const protocols: Protocol[] = ["grpc", "grpc-web", "connect-h1", "connect-h2"];

export interface CallOptions {
  token?: string;
  /** Host header / :authority to send instead of the server's own. */
  host?: string;
  /** More request headers (gRPC: metadata). */
  headers?: Record<string, string>;
  /** Called with the answer's headers (gRPC: its initial metadata). */
  onHeader?: (header: Headers) => void;
}

/**
 * Calls a unary RPC over a real client of the given protocol: @grpc/grpc-js for gRPC (HTTP/2 prior
 * knowledge), connect-node for gRPC-web (HTTP/1.1) and Connect (HTTP/1.1 and HTTP/2).
 * Errors come back as ConnectError with the code the server sent.
 */
export async function call<I extends DescMessage, O extends DescMessage>(
  protocol: Protocol,
  baseUrl: string,
  service: DescService,
  method: DescMethod & { input: I; output: O },
  request: MessageShape<I>,
  opts: CallOptions = {},
): Promise<MessageShape<O>> {
  if (protocol === "grpc") return grpcCall(baseUrl, service, method, request, opts);
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const transport: Transport =
    protocol === "grpc-web"
      ? createGrpcWebTransport({ baseUrl, httpVersion: "1.1" })
      : createConnectTransport({ baseUrl, httpVersion: protocol === "connect-h2" ? "2" : "1.1" });
  if (opts.host) headers.host = opts.host;
  const client = createClient(service, transport) as unknown as Record<string, (req: unknown, o: unknown) => Promise<MessageShape<O>>>;
  return client[method.localName]!(request, { headers, ...(opts.onHeader ? { onHeader: opts.onHeader } : {}) });
}

function grpcCall<I extends DescMessage, O extends DescMessage>(
  baseUrl: string,
  service: DescService,
  method: DescMethod & { input: I; output: O },
  request: MessageShape<I>,
  opts: CallOptions,
): Promise<MessageShape<O>> {
  const url = new URL(baseUrl);
  const client = new grpc.Client(`${url.hostname}:${url.port}`, grpc.credentials.createInsecure(), {
    ...(opts.host ? { "grpc.default_authority": opts.host } : {}),
  });
  const md = new grpc.Metadata();
  if (opts.token) md.set("authorization", `Bearer ${opts.token}`);
  for (const [name, value] of Object.entries(opts.headers ?? {})) md.set(name, value);
  return new Promise((resolve, reject) => {
    const unary = client.makeUnaryRequest(
      `/${service.typeName}/${method.name}`,
      (m: MessageShape<I>) => Buffer.from(toBinary(method.input, m)),
      (b: Buffer) => fromBinary(method.output, b),
      request,
      md,
      (err, res) => {
        client.close();
        if (err) reject(new ConnectError(err.details, err.code as number as Code));
        else resolve(res!);
      },
    );
    unary.on("metadata", (metadata: grpc.Metadata) => {
      const header = new Headers();
      for (const [name, value] of Object.entries(metadata.getMap())) header.set(name, String(value));
      opts.onHeader?.(header);
    });
  });
}

/** A typed Connect client (HTTP/1.1) for tests that only care about behaviour, not protocol. */
export function connectClient<S extends DescService>(service: S, baseUrl: string, token?: string): Client<S> {
  const transport = createConnectTransport({
    baseUrl,
    httpVersion: "1.1",
    interceptors: token
      ? [
          (next) => (req) => {
            req.header.set("authorization", `Bearer ${token}`);
            return next(req);
          },
        ]
      : [],
  });
  return createClient(service, transport);
}

/** REST over HTTP/1.1 (node:http, so that the Host header can be set). Returns the status and the parsed JSON body. */
export function rest(
  baseUrl: string,
  method: string,
  path: string,
  /** agent: a connection of its own (a pinned keep-alive agent), or false for a new one each call */
  opts: { token?: string; body?: unknown; host?: string; headers?: Record<string, string>; agent?: http.Agent | false; timeoutMs?: number } = {},
): Promise<{ status: number; body: any; headers: http.IncomingHttpHeaders }> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const payload = opts.body === undefined ? undefined : typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
  if (payload !== undefined) headers["content-type"] ??= "application/json";
  if (opts.host) headers.host = opts.host;
  return new Promise((resolve, reject) => {
    const req = http.request(`${baseUrl}${path}`, { method, headers, ...(opts.agent !== undefined ? { agent: opts.agent } : {}) }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (text += c));
      res.on("end", () => {
        let body: any = text;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          // not JSON: keep the text
        }
        resolve({ status: res.statusCode ?? 0, body, headers: res.headers });
      });
    });
    req.on("error", reject);
    if (opts.timeoutMs) req.setTimeout(opts.timeoutMs, () => req.destroy(new Error(`no answer within ${opts.timeoutMs} ms`)));
    req.end(payload);
  });
}

export async function expectCode(p: Promise<unknown>, code: Code): Promise<ConnectError> {
  try {
    await p;
  } catch (e) {
    const err = ConnectError.from(e);
    if (err.code !== code) throw new Error(`expected ${Code[code]}, got ${Code[err.code]}: ${err.message}`);
    return err;
  }
  throw new Error(`expected ${Code[code]}, got success`);
}
