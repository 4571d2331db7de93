import { hash, randomBytes, timingSafeEqual } from "node:crypto";
import type { FastifyRequest } from "fastify";
import type { ApiConfig, OidcConfig } from "../command/applications.js";
import type { ReplayGuard } from "../command/replay.js";
import { verifyDecoy, verifyPassword } from "../crypto/password.js";
import { type Clock, systemClock } from "../domain/clock.js";
import type { OAuthClientQueries } from "../query/oauth-clients.js";
import type { TenancyQueries } from "../query/tenancy.js";
import { oauth } from "./errors.js";
import { decodeJwt, verifyRs256 } from "./jwt.js";

/** How a client authenticates at the OAuth endpoints (RFC 6749 §2.3, RFC 7523 §2.2), in the order discovery lists them. */
export const authMethods = ["none", "client_secret_basic", "client_secret_post", "private_key_jwt"] as const;
export type AuthMethod = (typeof authMethods)[number];

/** A client of the OAuth endpoints: an application, or (client credentials, JWT profile) a machine user. */
export interface OAuthClient {
  kind: "application" | "machine";
  clientId: string;
  instanceId: string;
  orgId: string;
  /** The application's ID and project; for machines, the user's ID. */
  id: string;
  projectId?: string;
  authMethod: AuthMethod;
  secretHash: string | null;
  active: boolean;
  oidc?: OidcConfig;
  api?: ApiConfig;
  accessTokenType: "opaque" | "jwt";
}

interface Credentials {
  clientId?: string;
  secret?: string;
  assertion?: string;
  method: AuthMethod;
}

const ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/** The parameters `credentialsOf` reads: an endpoint that authenticates its client accepts them. */
export const CLIENT_AUTH_PARAMETERS = ["client_id", "client_secret", "client_assertion", "client_assertion_type"] as const;
/** Client assertions and JWT profile grants older than this are refused (iat). */
export const MAX_ASSERTION_AGE_S = 3600;
/** Tolerated clock difference for assertions from outside. */
export const CLOCK_SKEW_S = 5;

/** How the request authenticates its client; more than one mechanism is invalid_request (RFC 6749 §2.3). */
export function credentialsOf(req: FastifyRequest, params: Record<string, string>): Credentials {
  const found: Credentials[] = [];
  const header = req.headers.authorization;
  if (header?.startsWith("Basic ")) {
    const decoded = Buffer.from(header.slice(6), "base64").toString();
    const i = decoded.indexOf(":");
    if (i < 0) throw oauth.invalidClient("the Basic credentials are malformed");
    // RFC 6749 §2.3.1: both parts are form-encoded before base64.
    const formDecode = (s: string) => {
      let value: string;
      try {
        value = decodeURIComponent(s.replace(/\+/g, " "));
      } catch {
        throw oauth.invalidClient("the Basic credentials are malformed");
      }
      // No client ID or secret holds U+0000 (nor could PostgreSQL look one up).
      if (value.includes("\u0000")) throw oauth.invalidClient("the Basic credentials are malformed");
      return value;
    };
    found.push({ clientId: formDecode(decoded.slice(0, i)), secret: formDecode(decoded.slice(i + 1)), method: "client_secret_basic" });
  }
  if (params.client_secret) found.push({ clientId: params.client_id, secret: params.client_secret, method: "client_secret_post" });
  if (params.client_assertion || params.client_assertion_type) {
    if (params.client_assertion_type !== ASSERTION_TYPE) throw oauth.invalidClient(`client_assertion_type must be ${ASSERTION_TYPE}`);
    if (!params.client_assertion) throw oauth.invalidRequest("client_assertion is missing");
    found.push({ assertion: params.client_assertion, method: "private_key_jwt" });
  }
  if (found.length > 1) throw oauth.invalidRequest("more than one client authentication mechanism was used");
  if (found.length === 1) {
    const only = found[0]!;
    if (params.client_id && only.clientId && params.client_id !== only.clientId)
      throw oauth.invalidRequest("client_id does not match the client authentication");
    return only;
  }
  return { clientId: params.client_id, method: "none" };
}

/** Client authentication at the token, introspection and revocation endpoints. */
export class Clients {
  /**
   * Secrets verified recently, keyed by a SHA-256 of a key that lives only in this process, the client ID,
   * the stored hash and the secret: a client's repeated calls do not pay the scrypt cost each time. The
   * secret itself is never kept, no key can be tested against a guess without the process's key, and a
   * changed secret (new hash) never matches. A keyed hash rather than an HMAC: the keys are never shown to
   * anyone, so length extension does not apply, and the one-shot hash costs a fifth of `createHmac` (1.1 vs
   * 5.4 µs here) on every authenticated token and introspection call.
   */
  private readonly verified = new Map<string, number>();
  private readonly cacheKey = randomBytes(32).toString("base64url");
  /** Verifications under way, by the same key: calls arriving meanwhile wait for the same answer. */
  private readonly verifying = new Map<string, Promise<boolean>>();
  private static readonly VERIFIED_MS = 5 * 60_000;

  constructor(
    private readonly queries: OAuthClientQueries,
    private readonly replay: ReplayGuard,
    private readonly tenancy: Pick<TenancyQueries, "usableUser">,
    /** The time client assertions are checked at. */
    private readonly clock: Clock = systemClock,
  ) {}

  /** An application by its client ID. */
  async application(instanceId: string, clientId: string): Promise<OAuthClient | undefined> {
    const row = await this.queries.application(instanceId, clientId);
    if (!row) return undefined;
    const { app } = row;
    const config = app.config as unknown as OidcConfig & ApiConfig;
    return {
      kind: "application",
      clientId,
      instanceId,
      orgId: app.orgId,
      id: app.id,
      projectId: app.projectId,
      authMethod: config.authMethod,
      secretHash: app.secretHash,
      active: app.state === "active" && row.projectActive,
      accessTokenType: app.kind === "oidc" ? config.accessTokenType : "opaque",
      ...(app.kind === "oidc" ? { oidc: config } : { api: config }),
    };
  }

  /** A machine user by its username (client credentials) or ID (JWT profile); it authenticates with its secret. */
  async machine(instanceId: string, by: { username?: string; userId?: string }): Promise<OAuthClient | undefined> {
    const user = await this.queries.machine(instanceId, by);
    if (!user) return undefined;
    return {
      kind: "machine",
      clientId: user.username,
      instanceId,
      orgId: user.orgId,
      id: user.id,
      authMethod: "client_secret_basic",
      secretHash: user.secretHash,
      // As every user: active, and so is its organisation.
      active: !!(await this.tenancy.usableUser(user.id)),
      accessTokenType: user.accessTokenType === "jwt" ? "jwt" : "opaque",
    };
  }

  private async secretMatches(client: OAuthClient, secret: string): Promise<boolean> {
    if (!client.secretHash) return false;
    const key = hash("sha256", `${this.cacheKey}\0${client.clientId}\0${client.secretHash}\0${secret}`, "base64url");
    const until = this.verified.get(key);
    if (until && until > Date.now()) return true;
    // Calls of one client with one secret that arrive together share one verification: a burst of 50 (a newly
    // started worker, a cache entry just expired) would otherwise queue 50 scrypt runs on the thread pool.
    let verifying = this.verifying.get(key);
    if (!verifying) {
      verifying = verifyPassword(secret, client.secretHash).then(
        ({ valid }) => {
          this.verifying.delete(key);
          if (valid) {
            if (this.verified.size > 10_000) this.verified.clear();
            this.verified.set(key, Date.now() + Clients.VERIFIED_MS);
          }
          return valid;
        },
        (err: unknown) => {
          this.verifying.delete(key);
          throw err;
        },
      );
      this.verifying.set(key, verifying);
    }
    return verifying;
  }

  /**
   * Authenticates the client of a request with the method it registered (basic, post, none, private_key_jwt).
   * `allowed`: the methods this endpoint accepts. Every failure is invalid_client.
   */
  async authenticate(
    instanceId: string,
    issuer: string,
    endpoint: string,
    creds: Credentials,
    allowed: readonly AuthMethod[],
    lookup: (clientId: string) => Promise<OAuthClient | undefined> = (id) => this.application(instanceId, id),
  ): Promise<OAuthClient> {
    if (!allowed.includes(creds.method)) throw oauth.invalidClient(`client authentication ${creds.method} is not accepted here`);
    if (creds.method === "private_key_jwt") return this.authenticateAssertion(issuer, endpoint, creds.assertion!, lookup);
    if (!creds.clientId) throw oauth.invalidClient("no client authentication was included");
    const client = await lookup(creds.clientId);
    if (creds.method !== "none" && !(client?.active && client.secretHash)) {
      // A secret for a client that does not exist, is inactive or has no secret costs the time of a wrong one
      // and gets the same answer: the endpoint does not tell which client IDs exist (issue 14).
      await verifyDecoy(creds.secret ?? "");
      throw oauth.invalidClient("client authentication failed");
    }
    if (!client?.active) throw oauth.invalidClient("unknown or inactive client");
    if (creds.method === "none") {
      if (client.authMethod !== "none") throw oauth.invalidClient("the client must authenticate");
      return client;
    }
    // A client registered for basic may also use post and the other way round (both are the same secret).
    if (client.authMethod !== "client_secret_basic" && client.authMethod !== "client_secret_post") {
      throw oauth.invalidClient(`the client authenticates with ${client.authMethod}`);
    }
    if (!(await this.secretMatches(client, creds.secret ?? ""))) throw oauth.invalidClient("client authentication failed");
    return client;
  }

  private async authenticateAssertion(
    issuer: string,
    endpoint: string,
    assertion: string,
    lookup: (clientId: string) => Promise<OAuthClient | undefined>,
  ): Promise<OAuthClient> {
    const jwt = decodeJwt(assertion);
    if (!jwt) throw oauth.invalidClient("client_assertion is not a JWT");
    const p = jwt.payload;
    if (typeof p.iss !== "string" || p.iss !== p.sub) throw oauth.invalidClient("client_assertion: iss and sub must be the client ID");
    const client = await lookup(p.iss);
    if (!client?.active || client.authMethod !== "private_key_jwt") throw oauth.invalidClient("unknown client, or it does not use private_key_jwt");
    const ok = verifyRs256(jwt, await this.queries.verificationKeys({ applicationId: client.id }));
    if (!ok) throw oauth.invalidClient("client_assertion: the signature does not verify with the client's keys");
    checkAssertionTimes(p, "client_assertion", (d) => oauth.invalidClient(d), this.clock.now());
    const aud = Array.isArray(p.aud) ? p.aud : [p.aud];
    if (!aud.some((a) => a === issuer || a === endpoint)) throw oauth.invalidClient("client_assertion: aud must be the issuer or the endpoint");
    await this.replay.use(`client:${client.clientId}:${String(p.jti ?? "")}`, Number(p.exp), () =>
      oauth.invalidClient("client_assertion: jti missing or already used"),
    );
    return client;
  }
}

/** exp required and in the future; iat not in the future and at most an hour old; nbf passed (at `nowMs`). */
export function checkAssertionTimes(p: Record<string, unknown>, what: string, fail: (d: string) => Error, nowMs: number): void {
  const now = Math.floor(nowMs / 1000);
  if (typeof p.exp !== "number" || p.exp + CLOCK_SKEW_S < now) throw fail(`${what}: expired or without exp`);
  if (typeof p.iat !== "number" || p.iat > now + CLOCK_SKEW_S || now - p.iat > MAX_ASSERTION_AGE_S)
    throw fail(`${what}: iat missing, in the future or older than an hour`);
  if (p.nbf !== undefined && (typeof p.nbf !== "number" || p.nbf > now + CLOCK_SKEW_S)) throw fail(`${what}: not valid yet (nbf)`);
}

/** Constant-time comparison of two strings of any length. */
export function constantEquals(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  const len = Math.max(x.length, y.length, 64);
  const px = Buffer.alloc(len);
  const py = Buffer.alloc(len);
  x.copy(px);
  y.copy(py);
  return timingSafeEqual(px, py) && x.length === y.length;
}
