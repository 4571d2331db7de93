import type { FastifyInstance, FastifyRequest } from "fastify";
import type { TLSSocket } from "node:tls";
import { type Client, resolveClient, type TrustedProxies } from "../domain/forwarded.js";

export type { Client } from "../domain/forwarded.js";

declare module "fastify" {
  interface FastifyRequest {
    /**
     * Who the request comes from, as far as the server may believe it: behind trusted proxies, what they forwarded
     * (src/domain/forwarded.ts); otherwise the socket's peer, its TLS and its Host. Every client address (limits,
     * logs, traces), the issuer's scheme and host and the instance of a request come from here.
     */
    readonly client: Client;
  }
}

/** Gives every request its `client`, worked out once when first asked for (the request log asks first). */
export function decorateClient(app: FastifyInstance, trusted: TrustedProxies): void {
  const known = new WeakMap<FastifyRequest, Client>();
  app.decorateRequest("client", {
    getter(this: FastifyRequest): Client {
      let client = known.get(this);
      if (!client) {
        const socket = this.raw.socket as TLSSocket | undefined;
        const host = String(this.headers.host ?? this.headers[":authority"] ?? "");
        client = resolveClient({ address: socket?.remoteAddress ?? "", encrypted: !!socket?.encrypted, host }, this.headers, trusted);
        known.set(this, client);
      }
      return client;
    },
  });
}
