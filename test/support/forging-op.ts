import http from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";

/**
 * A FORGING OpenID Connect provider for tests of the relying party's checks: a bare node:http server on loopback
 * (no oidc-provider) that publishes discovery metadata, its keys (`/jwks`), a userinfo endpoint, and a token
 * endpoint answering any code with whatever ID token the test put in `idToken` (signed by any key, with any
 * header and claims, or unsigned). It records every request and every token request's form.
 */
export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export interface ForgingOp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Every request it was sent ("GET /jwks"), in order. */
  requests: string[];
  /** The form of every request to /token (code, code_verifier, redirect_uri, client_id, client_secret...). */
  tokenRequests: URLSearchParams[];
  /** The keys /jwks publishes (the first signs by default). */
  published: SigningKey[];
  /** The ID token /token answers with next (set by the test before `finish`). */
  idToken: string | undefined;
  /** What /userinfo answers. */
  userinfo: Record<string, unknown>;
  /** The standard claims of a good ID token for `nonce` (right iss, aud, fresh exp and iat), with `overrides`. */
  claims(nonce: string, overrides?: Record<string, unknown>): Record<string, unknown>;
  /** `claims` signed RS256 by `key` (default: the first published key), with `kid` (default: the key's own). */
  sign(claims: Record<string, unknown>, options?: { key?: SigningKey; header?: Record<string, unknown> }): Promise<string>;
  /** `claims` as an unsigned JWT (`alg: none`, header.payload. with an empty signature). */
  unsigned(claims: Record<string, unknown>): string;
  /** Publishes a new key with a new kid in place of the old ones (key rotation); returns it. */
  rotate(): Promise<SigningKey>;
  close(): Promise<void>;
}

let kids = 0;

export async function newSigningKey(kid = `k${++kids}-${Date.now().toString(36)}`): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" } };
}

const b64u = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

export async function startForgingOp(): Promise<ForgingOp> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const op: ForgingOp = {
    issuer,
    clientId: "forged-rp",
    clientSecret: "forging-op-client-secret-0123456789",
    requests: [],
    tokenRequests: [],
    published: [await newSigningKey()],
    idToken: undefined,
    userinfo: {},
    claims: (nonce, overrides = {}) => {
      const now = Math.floor(Date.now() / 1000);
      return { iss: issuer, aud: op.clientId, sub: "forged-user", iat: now, exp: now + 300, nonce, ...overrides };
    },
    sign: (claims, options = {}) => {
      const key = options.key ?? op.published[0]!;
      return new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: key.kid, ...options.header }).sign(key.privateKey);
    },
    unsigned: (claims) => `${b64u({ alg: "none", typ: "JWT" })}.${b64u(claims)}.`,
    rotate: async () => {
      const key = await newSigningKey();
      op.published = [key];
      return key;
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };

  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
    res.end(JSON.stringify(body));
  };
  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? "/", issuer);
    op.requests.push(`${req.method} ${url.pathname}`);
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      switch (url.pathname) {
        case "/.well-known/openid-configuration":
          return json(res, 200, {
            issuer,
            authorization_endpoint: `${issuer}/authorize`,
            token_endpoint: `${issuer}/token`,
            jwks_uri: `${issuer}/jwks`,
            userinfo_endpoint: `${issuer}/userinfo`,
            id_token_signing_alg_values_supported: ["RS256"],
            response_types_supported: ["code"],
            subject_types_supported: ["public"],
            token_endpoint_auth_methods_supported: ["client_secret_post"],
            code_challenge_methods_supported: ["S256"],
          });
        case "/jwks":
          return json(res, 200, { keys: op.published.map((k) => k.publicJwk) });
        case "/token": {
          op.tokenRequests.push(new URLSearchParams(Buffer.concat(chunks).toString()));
          if (!op.idToken) return json(res, 400, { error: "invalid_grant", error_description: "the test forged no ID token" });
          return json(res, 200, { access_token: "forged-access-token", token_type: "Bearer", expires_in: 300, id_token: op.idToken });
        }
        case "/userinfo":
          return json(res, 200, op.userinfo);
        default:
          return json(res, 404, { error: "not_found" });
      }
    });
  });
  return op;
}
