import { createHash } from "node:crypto";
import { SignJWT } from "jose";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { OidcFederation, type OidcSettings } from "../../src/federation/oidc.js";
import type { Fetch, RedirectStart } from "../../src/federation/provider.js";
import { refusedByProvider } from "../../src/federation/redirect.js";
import { type ForgingOp, newSigningKey, startForgingOp } from "../support/forging-op.js";

/**
 * What OidcFederation (openid-client) checks of an external provider's answer, against a provider that forges it
 * (test/support/forging-op.ts): the ID token's issuer, audience, expiry, nonce and signature (against the keys the
 * provider publishes, refetched when it rotates), the state, PKCE, the provider's own refusal, and http:// issuers.
 * Reusing a state (replaying a callback) is the caller's job (the sign-in intent is used once), not tested here.
 */
const redirectUri = "https://rp.example.test/idps/callback";
const fetcher: Fetch = (url, init) => fetch(url, init as RequestInit);

let op: ForgingOp;
let fed: OidcFederation;
let keys = 0;
/** A distinct provider version per sign-in set, so that OidcFederation's metadata cache never mixes cases. */
const newKey = () => `forging-op-${++keys}`;

beforeEach(async () => {
  op = await startForgingOp();
  fed = new OidcFederation(fetcher, { insecureHttp: true });
});
afterEach(() => op.close());

const settings = (overrides: Partial<OidcSettings> = {}): OidcSettings => ({
  issuer: op.issuer,
  clientId: op.clientId,
  clientSecret: op.clientSecret,
  scopes: ["openid", "email"],
  usePkce: true,
  isIdTokenMapping: true,
  ...overrides,
});

/** The provider's callback, as it would send the browser back: the code (anything), the state, its issuer. */
const callback = (start: RedirectStart, params: Record<string, string> = {}) =>
  new URL(`${redirectUri}?${new URLSearchParams({ code: "abc", state: start.state, iss: op.issuer, ...params })}`);

/**
 * A sign-in at the forging provider: `start`, then the ID token `forge` makes for the start's nonce is what /token
 * answers, then `finish` with the callback (`params` over the default ones).
 */
async function signIn(
  key: string,
  s: OidcSettings,
  forge: (nonce: string) => Promise<string> | string,
  params: Record<string, string> = {},
): Promise<{ start: RedirectStart; finished: ReturnType<OidcFederation["finish"]> }> {
  const start = await fed.start(key, s, redirectUri);
  op.idToken = await forge(start.nonce);
  const finished = fed.finish(key, s, callback(start, params), start);
  // Keep an unawaited rejection from being reported before the test awaits it.
  finished.catch(() => {});
  return { start, finished };
}

/** Its refusal (fails the test when it was accepted). */
async function refusal(finished: Promise<unknown>): Promise<Error> {
  const outcome = await finished.then(
    (user) => ({ accepted: user }),
    (e: unknown) => ({ error: e }),
  );
  if (!("error" in outcome)) throw new Error(`ACCEPTED what should be refused: ${JSON.stringify(outcome.accepted)}`);
  expect(outcome.error).toBeInstanceOf(Error);
  return outcome.error as Error;
}

/**
 * What a refusal says: openid-client's own message (a ClientError's is generic: "invalid response encountered"),
 * then its cause's (oauth4webapi's, which names the check), then the code.
 */
async function refusedWith(finished: Promise<unknown>): Promise<string> {
  const e = (await refusal(finished)) as Error & { code?: string };
  const cause = e.cause as (Error & { code?: string }) | undefined;
  const said = [e.message, cause?.message, cause?.code ?? e.code].filter(Boolean).join(" | ");
  if (process.env.SHOW_REFUSALS) console.log(`REFUSAL: ${said}`);
  return said;
}

describe("a good ID token", () => {
  it("is accepted: sub and email mapped, PKCE's verifier sent, the nonce and the signature checked", async () => {
    const s = settings();
    const { start, finished } = await signIn(newKey(), s, (nonce) =>
      op.sign(op.claims(nonce, { sub: "user-1", email: "user-1@forged.example.com", email_verified: true, name: "User One" })),
    );
    const user = await finished;
    expect(user).toMatchObject({ id: "user-1", email: "user-1@forged.example.com", emailVerified: true, displayName: "User One" });
    expect(user.tokens).toEqual({ accessToken: "forged-access-token", idToken: op.idToken });

    // The authorization request carried the state, the nonce and the S256 challenge of the verifier the token
    // endpoint received; the client authenticated with its secret.
    const authorize = new URL(start.url);
    expect(authorize.origin + authorize.pathname).toBe(`${op.issuer}/authorize`);
    expect(authorize.searchParams.get("state")).toBe(start.state);
    expect(authorize.searchParams.get("nonce")).toBe(start.nonce);
    expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
    expect(op.tokenRequests).toHaveLength(1);
    const form = op.tokenRequests[0]!;
    expect(form.get("code")).toBe("abc");
    expect(form.get("redirect_uri")).toBe(redirectUri);
    expect(form.get("client_secret")).toBe(op.clientSecret);
    expect(form.get("code_verifier")).toBe(start.codeVerifier);
    expect(authorize.searchParams.get("code_challenge")).toBe(createHash("sha256").update(start.codeVerifier).digest("base64url"));
    // The signature was checked against the provider's published keys.
    expect(op.requests).toContain("GET /jwks");
    // isIdTokenMapping: userinfo not asked.
    expect(op.requests).not.toContain("GET /userinfo");
  });

  it("without PKCE sends no verifier; with userinfo, its claims are merged (for the same sub)", async () => {
    const s = settings({ usePkce: false, isIdTokenMapping: false });
    op.userinfo = { sub: "user-2", email: "from-userinfo@forged.example.com", email_verified: true };
    const { start, finished } = await signIn(newKey(), s, (nonce) => op.sign(op.claims(nonce, { sub: "user-2" })));
    const user = await finished;
    expect(user).toMatchObject({ id: "user-2", email: "from-userinfo@forged.example.com", emailVerified: true });
    expect(new URL(start.url).searchParams.has("code_challenge")).toBe(false);
    expect(op.tokenRequests[0]!.has("code_verifier")).toBe(false);
    expect(op.requests).toContain("GET /userinfo");
  });

  it("userinfo for another sub than the ID token's is refused", async () => {
    op.userinfo = { sub: "someone-else", email: "victim@forged.example.com" };
    const { finished } = await signIn(newKey(), settings({ isIdTokenMapping: false }), (nonce) => op.sign(op.claims(nonce, { sub: "user-3" })));
    expect(await refusedWith(finished)).toMatch(/unexpected "response" body "sub" property value/);
  });
});

describe("an ID token's claims", () => {
  it("from another issuer are refused", async () => {
    const { finished } = await signIn(newKey(), settings(), (nonce) => op.sign(op.claims(nonce, { iss: "https://evil.example.com" })));
    expect(await refusedWith(finished)).toMatch(/unexpected JWT "iss" \(issuer\) claim value/);
  });

  it("for another audience are refused (alone, or with ours among others but azp another's)", async () => {
    const alone = await signIn(newKey(), settings(), (nonce) => op.sign(op.claims(nonce, { aud: "another-client" })));
    expect(await refusedWith(alone.finished)).toMatch(/unexpected JWT "aud" \(audience\) claim value/);
    const among = await signIn(newKey(), settings(), (nonce) => op.sign(op.claims(nonce, { aud: ["another-client", op.clientId], azp: "another-client" })));
    expect(await refusedWith(among.finished)).toMatch(/unexpected ID Token "azp" \(authorized party\) claim value/);
  });

  it("expired beyond the clock tolerance are refused", async () => {
    const now = Math.floor(Date.now() / 1000);
    const { finished } = await signIn(newKey(), settings(), (nonce) => op.sign(op.claims(nonce, { iat: now - 600, exp: now - 120 })));
    expect(await refusedWith(finished)).toMatch(/unexpected JWT "exp" \(expiration time\) claim value, expiration is past current timestamp/);
  });

  it("with another nonce, or none, are refused", async () => {
    const other = await signIn(newKey(), settings(), () => op.sign(op.claims("another-nonce")));
    expect(await refusedWith(other.finished)).toMatch(/unexpected ID Token "nonce" claim value/);
    const none = await signIn(newKey(), settings(), (nonce) => op.sign({ ...op.claims(nonce), nonce: undefined }));
    expect(await refusedWith(none.finished)).toMatch(/JWT "nonce" \(nonce\) claim missing/);
  });
});

describe("an ID token's signature", () => {
  it("absent (alg none) is refused", async () => {
    const { finished } = await signIn(newKey(), settings(), (nonce) => op.unsigned(op.claims(nonce)));
    expect(await refusedWith(finished)).toMatch(/unexpected JWT "alg" header parameter/);
  });

  it("HS256 with the client secret as its key (not a published algorithm) is refused", async () => {
    const { finished } = await signIn(newKey(), settings(), (nonce) =>
      new SignJWT(op.claims(nonce)).setProtectedHeader({ alg: "HS256" }).sign(new TextEncoder().encode(op.clientSecret)),
    );
    expect(await refusedWith(finished)).toMatch(/unexpected JWT "alg" header parameter/);
  });

  it("by a key not in the provider's JWKS is refused: under the published kid, under another kid, with no kid", async () => {
    const rogue = await newSigningKey();
    const sameKid = await signIn(newKey(), settings(), (nonce) => op.sign(op.claims(nonce), { key: rogue, header: { kid: op.published[0]!.kid } }));
    expect(await refusedWith(sameKid.finished)).toMatch(/signature verification failed/);
    const otherKid = await signIn(newKey(), settings(), (nonce) => op.sign(op.claims(nonce), { key: rogue }));
    expect(await refusedWith(otherKid.finished)).toMatch(/no applicable key found/);
    const noKid = await signIn(newKey(), settings(), (nonce) => op.sign(op.claims(nonce), { key: rogue, header: { kid: undefined } }));
    expect(await refusedWith(noKid.finished)).toMatch(/signature verification failed/);
  });
});

describe("the provider's key rotation", () => {
  /** A first sign-in with the first key (its JWKS cached), the provider rotating, a second with the new key. */
  async function rotated(key: string) {
    const s = settings();
    const first = await signIn(key, s, (nonce) => op.sign(op.claims(nonce, { sub: "before" })));
    expect((await first.finished).id).toBe("before");
    const fresh = await op.rotate();
    return signIn(key, s, (nonce) => op.sign(op.claims(nonce, { sub: "after" }), { key: fresh }));
  }

  // openid-client's own check (oauth4webapi's getPublicSigKeyFromIssuerJwksUri) downloads the JWKS again for an
  // unknown kid only when its copy is at least 60 s old, which refused such tokens for up to a minute; the
  // signature is checked with src/federation/remote-keys.ts instead, which fetches at once.
  it("a token signed by the new key (new kid) is accepted right after the rotation", async () => {
    const { finished } = await rotated(newKey());
    expect((await finished).id).toBe("after");
    expect(op.requests.filter((r) => r === "GET /jwks")).toHaveLength(2);
  });

  it("a token signed by the new key (new kid) is accepted a minute after the keys were fetched", async () => {
    const key = newKey();
    const s = settings();
    const first = await signIn(key, s, (nonce) => op.sign(op.claims(nonce, { sub: "before" })));
    expect((await first.finished).id).toBe("before");
    const fresh = await op.rotate();
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.now() + 61_000);
      const second = await signIn(key, s, (nonce) => op.sign(op.claims(nonce, { sub: "after" }), { key: fresh }));
      expect((await second.finished).id).toBe("after");
    } finally {
      vi.useRealTimers();
    }
    expect(op.requests.filter((r) => r === "GET /jwks")).toHaveLength(2);
  });

  it("the old key, no longer published, is refused once the new keys are fetched", async () => {
    const key = newKey();
    const s = settings();
    const old = op.published[0]!;
    const first = await signIn(key, s, (nonce) => op.sign(op.claims(nonce, { sub: "before" })));
    await first.finished;
    const fresh = await op.rotate();
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.now() + 61_000);
      const second = await signIn(key, s, (nonce) => op.sign(op.claims(nonce), { key: fresh }));
      await second.finished;
      const third = await signIn(key, s, (nonce) => op.sign(op.claims(nonce), { key: old }));
      expect(await refusedWith(third.finished)).toMatch(/no applicable key found/);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("the callback", () => {
  it("with another state is refused before the code is exchanged", async () => {
    const { finished } = await signIn(newKey(), settings(), (nonce) => op.sign(op.claims(nonce)), { state: "another-state" });
    expect(await refusedWith(finished)).toMatch(/unexpected "state" response parameter value/);
    expect(op.tokenRequests).toHaveLength(0);
  });

  it("from another issuer (iss) is refused before the code is exchanged", async () => {
    const { finished } = await signIn(newKey(), settings(), (nonce) => op.sign(op.claims(nonce)), { iss: "https://evil.example.com" });
    expect(await refusedWith(finished)).toMatch(/unexpected "iss" \(issuer\) response parameter value/);
    expect(op.tokenRequests).toHaveLength(0);
  });

  it("with the provider's error is its refusal (refusedByProvider), no code exchanged", async () => {
    const key = newKey();
    const s = settings();
    const start = await fed.start(key, s, redirectUri);
    const url = new URL(
      `${redirectUri}?${new URLSearchParams({ error: "access_denied", error_description: "the user said no", state: start.state, iss: op.issuer })}`,
    );
    const e = await refusal(fed.finish(key, s, url, start));
    expect(e.message).toMatch(/authorization response from the server is an error/);
    expect(refusedByProvider(e)).toBe(true);
    expect(op.tokenRequests).toHaveLength(0);
  });

  it("a forged ID token's refusal is not taken for the provider's (refusedByProvider false)", async () => {
    const { finished } = await signIn(newKey(), settings(), (nonce) => op.sign(op.claims(nonce, { aud: "another-client" })));
    expect(refusedByProvider(await refusal(finished))).toBe(false);
  });
});

describe("an http:// issuer", () => {
  it("without insecureHttp is refused before anything is sent", async () => {
    let sent = 0;
    const counted: Fetch = (url, init) => {
      sent++;
      return fetcher(url, init);
    };
    const strict = new OidcFederation(counted, { insecureHttp: false });
    const key = newKey();
    const s = settings();
    await expect(strict.start(key, s, redirectUri)).rejects.toThrow(/the issuer is http:\/\/, and SVC_IDP_INSECURE_HTTP is off/);
    const intent = { state: "s", nonce: "n", codeVerifier: "v".repeat(43) };
    await expect(strict.finish(key, s, new URL(`${redirectUri}?code=abc&state=s`), intent)).rejects.toThrow(/SVC_IDP_INSECURE_HTTP is off/);
    expect(op.requests).toEqual([]);
    expect(sent).toBe(0);
  });
});
