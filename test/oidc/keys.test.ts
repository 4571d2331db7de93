import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MovableClock } from "../support/clock.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

// Scheduled rotation: a key signs for SVC_OIDC_SIGNING_KEY_LIFETIME; a key within a minute of its end is not
// chosen any more, so a 62-second lifetime makes the next key take over after about 2 seconds of the server's
// clock, which the test moves.
let t: TestServer;
const clock = new MovableClock();
let secret: string;

beforeAll(async () => {
  t = await startTestServer({ SVC_OIDC_SIGNING_KEY_LIFETIME: "62", SVC_OIDC_ACCESS_TOKEN_LIFETIME: "600" }, { clock });
  const m = await rest(t.url, "POST", "/resources/v3alpha/users", {
    token: t.adminPat,
    body: { username: "rotor", machine: { name: "Rotor", accessTokenType: "ACCESS_TOKEN_TYPE_JWT" } },
  });
  secret = (await rest(t.url, "POST", `/resources/v3alpha/users/${m.body.details.id}/_generate_secret`, { token: t.adminPat })).body.clientSecret;
});
afterAll(() => t?.close());

const tokenNow = async () =>
  (
    await rest(t.url, "POST", "/oauth/v2/token", {
      body: `grant_type=client_credentials&client_id=rotor&client_secret=${secret}`,
      headers: { "content-type": "application/x-www-form-urlencoded" },
    })
  ).body.access_token as string;

describe("signing keys on a schedule", () => {
  it("a new key takes over when the current one's time is up; the old one stays published for its tokens", async () => {
    const first = await tokenNow();
    clock.advance(2500);
    const second = await tokenNow();
    const [a, b] = [decodeProtectedHeader(first).kid, decodeProtectedHeader(second).kid];
    expect(a).not.toBe(b);
    const jwks = (await rest(t.url, "GET", "/oauth/v2/keys")).body.keys.map((k: { kid: string }) => k.kid);
    expect(jwks).toEqual(expect.arrayContaining([a, b]));
    const remote = createRemoteJWKSet(new URL(`${t.url}/oauth/v2/keys`));
    await jwtVerify(first, remote, { issuer: t.url });
    await jwtVerify(second, remote, { issuer: t.url });
  });
});
