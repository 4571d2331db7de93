import { createHash } from "node:crypto";
import type { ActorClaim } from "../events/index.js";
import { useSession } from "../command/sessions.js";
import { ensureSigningKey, type SigningKeyPolicy } from "../command/signing-keys.js";
import { randomBytesPooled } from "../crypto/random.js";
import { type Clock, systemClock } from "../domain/clock.js";
import type { EventStore } from "../eventstore/eventstore.js";
import { newId } from "../ids.js";
import type { SigningKey } from "../query/signing-keys.js";
import type { TenancyQueries } from "../query/tenancy.js";
import type { OidcQueries } from "./context.js";
import { oauth } from "./errors.js";
import { decodeJwt, signJwt, verifyRs256 } from "./jwt.js";
import type { OpaqueTokens } from "./opaque.js";

export interface Lifetimes {
  accessTokenMs: number;
  idTokenMs: number;
  refreshIdleMs: number;
  refreshAbsoluteMs: number;
  /** A retry of the same refresh within this time gets the answer of the first (0: none). */
  refreshGraceMs: number;
  authRequestMs: number;
}

/** What an access token stands for; opaque tokens carry it encrypted, JWT access tokens signed. */
export interface AccessClaims {
  iss: string;
  sub: string;
  client_id: string;
  aud: string[];
  scope: string;
  iat: number;
  exp: number;
  jti: string;
  auth_time?: number;
  sid?: string;
  amr?: string[];
  /** Who acts for the subject (RFC 8693 §4.1): tokens of a token exchange with an actor. */
  act?: ActorClaim;
  /** Instance and organisation of the subject: the API verifier needs them without a lookup. */
  "urn:svc:iam:instance:id": string;
  "urn:svc:iam:user:resourceowner:id": string;
}

/**
 * The claims of an access token this server made, checked for the shape it writes: a token is read back from
 * outside (sealed or signed), so its JSON is narrowed, not cast.
 */
export function accessClaimsOf(p: Record<string, unknown>): AccessClaims | undefined {
  return isAccessClaims(p) ? p : undefined;
}

function isAccessClaims(p: Record<string, unknown>): p is Record<string, unknown> & AccessClaims {
  const strings = ["iss", "sub", "client_id", "scope", "jti", "urn:svc:iam:instance:id", "urn:svc:iam:user:resourceowner:id"] as const;
  const stringList = (v: unknown) => Array.isArray(v) && v.every((a) => typeof a === "string");
  return (
    strings.every((k) => typeof p[k] === "string") &&
    typeof p.iat === "number" &&
    typeof p.exp === "number" &&
    stringList(p.aud) &&
    (p.auth_time === undefined || typeof p.auth_time === "number") &&
    (p.sid === undefined || typeof p.sid === "string") &&
    (p.amr === undefined || stringList(p.amr)) &&
    (p.act === undefined || isActorClaim(p.act))
  );
}

/** An actor claim as this server writes it: `sub` and `iss` strings, and a nested actor of the same shape. */
export function isActorClaim(v: unknown, depth = 0): v is ActorClaim {
  if (!v || typeof v !== "object" || Array.isArray(v) || depth > 16) return false;
  const a = v as Record<string, unknown>;
  return typeof a.sub === "string" && typeof a.iss === "string" && (a.act === undefined || isActorClaim(a.act, depth + 1));
}

export const sha256 = (s: string) => createHash("sha256").update(s).digest("base64url");
/** 256 random bits, base64url: codes and refresh tokens. */
export const randomToken = () => randomBytesPooled(32).toString("base64url");
const seconds = (d: Date | number) => Math.floor((typeof d === "number" ? d : d.getTime()) / 1000);

/** Makes access and ID tokens, and checks the access tokens it made. */
export class Tokens {
  constructor(
    private readonly es: EventStore,
    private readonly q: Pick<OidcQueries, "keys" | "tokenQueries" | "sessions"> & { tenancy: Pick<TenancyQueries, "usableUser"> },
    private readonly keyPolicy: SigningKeyPolicy,
    private readonly opaque: OpaqueTokens,
    readonly lifetimes: Lifetimes,
    /** The time tokens are issued at and expire by. */
    readonly clock: Clock = systemClock,
  ) {}

  /**
   * The instance's signing key. Reading it writes nothing; when none may sign (a fresh instance, or the
   * current key's time is up) the key is made here, by the explicit command, and read again. The schedule
   * has no timer of its own: a key is due when a token or the JWKS needs one, in whichever process asks.
   */
  async signingKey(instanceId: string): Promise<SigningKey> {
    for (;;) {
      const key = await this.q.keys.signer(instanceId);
      if (key) return key;
      await ensureSigningKey(this.es, this.keyPolicy, instanceId);
    }
  }

  /** An access token of the given type and its claims. */
  async accessToken(
    type: "opaque" | "jwt",
    instanceId: string,
    given: Omit<AccessClaims, "iat" | "exp" | "jti">,
    /** Claims a function added, first in the token (the caller keeps them off the token's own). */
    added: Record<string, unknown> = {},
    now = this.clock.now(),
  ) {
    await this.mayAct(given.sub, instanceId);
    // A token bound to a session is a use of it (its idle lifetime starts again), and is not made once it has ended.
    if (given.sid && !(await useSession(this.es, this.q.sessions, given.sid))) throw oauth.invalidGrant("the session has ended");
    // Copied key by key: an object literal spreading one object and adding keys takes V8's slow path, which
    // a profile of client credentials showed at 9 % of a call.
    const claims: AccessClaims = Object.assign({}, added, given, { iat: seconds(now), exp: seconds(now + this.lifetimes.accessTokenMs), jti: newId() });
    if (type === "opaque") return { token: this.opaque.seal(claims as unknown as Record<string, unknown>), claims };
    const key = await this.signingKey(instanceId);
    return { token: signJwt({ ...claims, aud: claims.aud }, key, "at+jwt"), claims };
  }

  async idToken(instanceId: string, claims: Record<string, unknown>, now = this.clock.now()): Promise<string> {
    await this.mayAct(String(claims.sub), instanceId);
    const key = await this.signingKey(instanceId);
    return signJwt({ ...claims, iat: seconds(now), exp: seconds(now + this.lifetimes.idTokenMs) }, key);
  }

  /**
   * No token is made for a user that may not act (gone, inactive, in an inactive organisation), whichever grant
   * asks: the grants check their user too, but a code or a subject token may outlive the change that stopped it.
   * Every subject is a user (machine users for client credentials and the JWT profile; applications get none).
   */
  private async mayAct(sub: string, instanceId: string): Promise<void> {
    const user = await this.q.tenancy.usableUser(sub);
    if (user?.instanceId !== instanceId) throw oauth.invalidGrant("the user can no longer sign in");
  }

  /** at_hash / c_hash (OIDC Core §3.3.2.11): the left half of the SHA-256 of the value, base64url. */
  static halfHash(value: string): string {
    return createHash("sha256").update(value).digest().subarray(0, 16).toString("base64url");
  }

  /** The claims inside an opaque token, unchecked (the caller verifies the token afterwards). */
  peek(token: string): Record<string, unknown> | undefined {
    return this.opaque.open(token);
  }

  /**
   * The claims of an access token issued by this instance that is still valid: not expired, not revoked, its
   * session not ended (logout, or its lifetime: a check is a use of the session), its user still there and able
   * to act (active, in an active organisation). Anything else is undefined.
   */
  async verifyAccess(token: string, instanceId: string): Promise<AccessClaims | undefined> {
    const sealed = this.opaque.open(token);
    let claims = sealed && accessClaimsOf(sealed);
    if (!sealed) {
      const jwt = decodeJwt(token);
      if (jwt?.header.typ !== "at+jwt") return undefined;
      const published = await this.q.keys.published(instanceId);
      if (!verifyRs256(jwt, (kid) => published.find((k) => k.kid === kid)?.key)) return undefined;
      claims = accessClaimsOf(jwt.payload);
    }
    if (!claims || claims["urn:svc:iam:instance:id"] !== instanceId) return undefined;
    if (claims.exp * 1000 <= this.clock.now()) return undefined;
    if (await this.q.tokenQueries.isRevoked(claims.jti)) return undefined;
    if (claims.sid && !(await useSession(this.es, this.q.sessions, claims.sid))) return undefined;
    // Every subject is a user (see `mayAct`): a removed one is as inactive as a deactivated one.
    const user = await this.q.tenancy.usableUser(claims.sub);
    if (user?.instanceId !== instanceId) return undefined;
    return claims;
  }
}
