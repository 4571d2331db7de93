import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { fromBase64url } from "../crypto/tokens.js";
import { type Clock, systemClock } from "../domain/clock.js";

/**
 * The name of the login UI's CSRF cookie: a random value the server sets in the browser before any sign-in (a
 * pre-session), which the forms' tokens are bound to. Behind https it has the `__Host-` prefix, which browsers
 * accept only from this very host, Secure, with Path=/ and without Domain: a sibling host of the same site cannot
 * plant a value whose token it obtained (cookie tossing; SameSite does not separate siblings). Plain http (local
 * development) cannot have the prefix; there the Origin / Sec-Fetch-Site check of the posts keeps siblings out.
 */
export const csrfCookieName = (secure: boolean) => (secure ? "__Host-svc_csrf" : "svc_csrf");

/**
 * HMAC signatures for the login UI: CSRF tokens bound to the CSRF cookie (signed double submit; what keeps another
 * browser's cookie and token out of this one is the cookie's name, `csrfCookieName`, and the posts' origin check)
 * and short-lived proofs carried between pages (a password that was verified, waiting for the required change).
 * The key is derived from the master key.
 */
export class Signer {
  constructor(
    private readonly key: Buffer,
    /** The time statements expire by. */
    private readonly clock: Clock = systemClock,
  ) {}

  static fromMasterKey(masterKey: Buffer, clock: Clock = systemClock): Signer {
    return new Signer(createHmac("sha256", masterKey).update("svc login ui v1").digest(), clock);
  }

  private mac(purpose: string, value: string): Buffer {
    return createHmac("sha256", this.key).update(`${purpose}\0${value}`).digest();
  }

  /** The CSRF token that forms carry for a browser's CSRF cookie. */
  csrfToken(cookie: string): string {
    return this.mac("csrf", cookie).toString("base64url");
  }

  csrfValid(cookie: string | undefined, token: unknown): boolean {
    if (!cookie || typeof token !== "string" || !token) return false;
    const expected = this.mac("csrf", cookie);
    const given = fromBase64url(token);
    return !!given && given.length === expected.length && timingSafeEqual(given, expected);
  }

  /** A signed, expiring statement ("this browser proved the password of user X"). */
  seal(purpose: string, data: Record<string, unknown>, ttlMs: number): string {
    const body = Buffer.from(JSON.stringify({ ...data, exp: this.clock.now() + ttlMs })).toString("base64url");
    return `${body}.${this.mac(purpose, body).toString("base64url")}`;
  }

  open(purpose: string, sealed: unknown): Record<string, unknown> | undefined {
    if (typeof sealed !== "string") return undefined;
    const [body, sig, extra] = sealed.split(".");
    if (!body || !sig || extra !== undefined) return undefined;
    const expected = this.mac(purpose, body);
    const given = fromBase64url(sig);
    if (!given || given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const data = JSON.parse(Buffer.from(body, "base64url").toString()) as Record<string, unknown>;
    return typeof data.exp === "number" && data.exp > this.clock.now() ? data : undefined;
  }
}

export const newCookieValue = () => randomBytes(32).toString("base64url");
