import { createRemoteJWKSet, customFetch, type JWTVerifyGetKey } from "jose";
import type { Fetch } from "./provider.js";

/** Asymmetric signatures only: never `none`, never HMAC (whose key would be a shared secret). */
export const SIGNATURE_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];

/**
 * How soon the keys may be fetched again for an unknown `kid`: at once. A token reaches the check only through a
 * round trip that it uses up (an ID token straight from the token endpoint, a JWT at the callback of a started
 * round trip), so made-up kids cost the provider no more fetches than sign-ins do.
 */
const KEYS_COOLDOWN_MS = 0;
/** How long fetched keys are used before they are fetched again. */
const KEYS_MAX_AGE_MS = 10 * 60_000;
/** As long as any request to a provider may take (the outbound fetch's limit); jose's own default is 5 s. */
const KEYS_TIMEOUT_MS = 10_000;

/**
 * Providers' published signing keys (JWKS), per provider version: fetched through the outbound policy, kept, and
 * fetched again for a `kid` not among them (a key the provider started signing with) at most every few seconds.
 * openid-client's own check fetches them again only once a minute, which refused every sign-in meanwhile when a
 * provider publishes a new key as it starts using it.
 */
export class RemoteKeySets {
  private readonly sets = new Map<string, JWTVerifyGetKey>();

  constructor(private readonly fetch: Fetch) {}

  of(key: string, jwksUri: string): JWTVerifyGetKey {
    let keys = this.sets.get(key);
    if (!keys) {
      const fetch = this.fetch;
      keys = createRemoteJWKSet(new URL(jwksUri), {
        [customFetch]: (url: string, init: RequestInit) => fetch(url, { method: "GET", headers: init.headers ?? {} }),
        cooldownDuration: KEYS_COOLDOWN_MS,
        cacheMaxAge: KEYS_MAX_AGE_MS,
        timeoutDuration: KEYS_TIMEOUT_MS,
      });
      if (this.sets.size > 1000) this.sets.clear();
      this.sets.set(key, keys);
    }
    return keys;
  }
}
