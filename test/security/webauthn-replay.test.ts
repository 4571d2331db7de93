import { createHash, generateKeyPairSync, randomBytes, sign } from "node:crypto";
import { isoCBOR } from "@simplewebauthn/server/helpers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { addHuman } from "../oidc/rp.js";

// Security review #19: a WebAuthn assertion answers one challenge once. Synced passkeys report the signature counter
// 0 at every use, and then the counter proves nothing (simplewebauthn skips its check): only a challenge that is
// used up stops a resubmitted or captured assertion. The authenticator below is such a passkey, in software.

const b64url = (b: Uint8Array) => Buffer.from(b).toString("base64url");
const sha256 = (b: Buffer | string) => createHash("sha256").update(b).digest();

/** A P-256 authenticator whose counter stays 0, answering options as the WebAuthn JSON encoding has them. */
class CounterZeroAuthenticator {
  private readonly keys = generateKeyPairSync("ec", { namedCurve: "P-256" });
  private readonly credentialId = randomBytes(16);
  private userHandle = "";

  private authData(rpId: string, flags: number, attested = Buffer.alloc(0)) {
    // rpIdHash, flags (UP, UV, AT), the counter: always 0
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), Buffer.alloc(4), attested]);
  }

  private clientData(type: string, challenge: string, origin: string) {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  register(optionsJson: string, origin: string): string {
    const o = JSON.parse(optionsJson);
    this.userHandle = o.user.id;
    const jwk = this.keys.publicKey.export({ format: "jwk" });
    const cose = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, "base64url")],
        [-3, Buffer.from(jwk.y!, "base64url")],
      ]),
    );
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const attested = Buffer.concat([Buffer.alloc(16), idLength, this.credentialId, Buffer.from(cose)]);
    const attestationObject = isoCBOR.encode(
      new Map<string, unknown>([
        ["fmt", "none"],
        ["attStmt", new Map()],
        ["authData", this.authData(o.rp.id, 0x45, attested)],
      ]) as never,
    );
    return JSON.stringify({
      id: b64url(this.credentialId),
      rawId: b64url(this.credentialId),
      type: "public-key",
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(this.clientData("webauthn.create", o.challenge, origin)),
        attestationObject: b64url(attestationObject),
        transports: ["internal"],
      },
    });
  }

  assert(optionsJson: string, origin: string): string {
    const o = JSON.parse(optionsJson);
    const authenticatorData = this.authData(o.rpId, 0x05);
    const clientDataJSON = this.clientData("webauthn.get", o.challenge, origin);
    const signature = sign("sha256", Buffer.concat([authenticatorData, sha256(clientDataJSON)]), this.keys.privateKey);
    return JSON.stringify({
      id: b64url(this.credentialId),
      rawId: b64url(this.credentialId),
      type: "public-key",
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authenticatorData),
        signature: b64url(signature),
        userHandle: this.userHandle,
      },
    });
  }
}

let t: TestServer;
const PASSWORD = "Secr3t!pass";
/** WebAuthn needs a domain as RP ID: the instance's "localhost" domain. */
const host = () => `localhost:${t.port}`;
const origin = () => `http://${host()}`;
const api = (method: string, path: string, body?: unknown) =>
  rest(t.url, method, `/resources/v3alpha${path}`, { token: t.adminPat, host: host(), ...(body ? { body } : {}) });

beforeAll(async () => {
  t = await startTestServer();
  const patched = await rest(t.url, "PATCH", "/settings/v3alpha/login", {
    token: t.adminPat,
    body: { secondFactors: { set: { value: ["otp", "u2f"] } }, passwordlessAllowed: { set: true } },
  });
  expect(patched.status).toBe(200);
});
afterAll(async () => {
  await t?.close();
});

/** A user with a counter-0 security key or passkey, registered through the user API. */
async function userWithKey(username: string, passwordless: boolean) {
  const userId = await addHuman(t, username, PASSWORD);
  const authenticator = new CounterZeroAuthenticator();
  const started = await api("POST", `/users/${userId}/webauthn_keys/_start`, { passwordless });
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  const credentialJson = authenticator.register(started.body.optionsJson, origin());
  const finished = await api("POST", `/users/${userId}/webauthn_keys/_finish`, {
    registrationToken: started.body.registrationToken,
    credentialJson,
    origin: origin(),
  });
  expect(finished.status, JSON.stringify(finished.body)).toBe(201);
  return { userId, authenticator };
}

/** A browser of the login UI on the RP's host: its cookies, and the fields of the page it was shown last. */
class LoginBrowser {
  private readonly cookies = new Map<string, string>();
  fields: Record<string, string> = {};
  options = "";

  async request(method: "GET" | "POST", path: string, body?: Record<string, string>) {
    const headers: Record<string, string> = { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ") };
    if (body) headers["content-type"] = "application/x-www-form-urlencoded";
    const r = await rest(t.url, method, path, { host: host(), headers, ...(body ? { body: new URLSearchParams(body).toString() } : {}) });
    for (const c of [r.headers["set-cookie"] ?? []].flat()) {
      const [name, value] = c.split(";")[0]!.split("=") as [string, string];
      this.cookies.set(name, value);
    }
    const html = String(r.body);
    this.fields = Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]));
    this.options = /<script type="application\/json" id="webauthn-options">(.*?)<\/script>/.exec(html)?.[1] ?? "";
    return r;
  }
}

/** The user's sign-ins with a security key or passkey (amr hwk). */
const keySessionsOf = (userId: string) => t.server.db.prisma.loginSession.count({ where: { userId, amr: { has: "hwk" } } });
const signedIn = (r: { status: number; body: unknown }) => r.status === 200 && /Signed in as/.test(String(r.body));

describe("a login UI WebAuthn form answers its challenge once", () => {
  it("a resubmitted passkey sign-in is refused", async () => {
    const { userId, authenticator } = await userWithKey("replaypasskey", true);
    const browser = new LoginBrowser();
    expect((await browser.request("GET", "/ui/login/passkey")).status).toBe(200);
    const form = { ...browser.fields, credential: authenticator.assert(browser.options, origin()) };
    expect(signedIn(await browser.request("POST", "/ui/login/passkey", form))).toBe(true);
    expect(await keySessionsOf(userId)).toBe(1);

    // The same post again (the browser's "resubmit", or a captured form): no second sign-in.
    const again = await browser.request("POST", "/ui/login/passkey", form);
    expect(signedIn(again)).toBe(false);
    expect(again.status).toBe(401);
    // ... nor from another browser.
    const other = new LoginBrowser();
    await other.request("GET", "/ui/login");
    expect(signedIn(await other.request("POST", "/ui/login/passkey", { ...form, csrf: other.fields.csrf! }))).toBe(false);
    expect(await keySessionsOf(userId)).toBe(1);
  });

  it("a resubmitted security-key step is refused", async () => {
    const { userId, authenticator } = await userWithKey("replaykey", false);
    const browser = new LoginBrowser();
    await browser.request("GET", "/ui/login");
    const keyStep = await browser.request("POST", "/ui/login/password", { ...browser.fields, loginName: "replaykey", password: PASSWORD });
    expect(keyStep.status).toBe(200);
    expect(browser.options).not.toBe("");
    const form = { ...browser.fields, credential: authenticator.assert(browser.options, origin()) };
    expect(signedIn(await browser.request("POST", "/ui/login/webauthn/login", form))).toBe(true);
    expect(await keySessionsOf(userId)).toBe(1);

    const again = await browser.request("POST", "/ui/login/webauthn/login", form);
    expect(signedIn(again)).toBe(false);
    expect(again.status).toBe(401);
    expect(await keySessionsOf(userId)).toBe(1);
  });
});

describe("a sessions API WebAuthn challenge is answered once, also by concurrent calls", () => {
  it("of concurrent SetSession calls with the same assertion, exactly one succeeds", async () => {
    const { authenticator } = await userWithKey("replayapi", false);
    const created = await api("POST", "/sessions", {
      checks: { user: { loginName: "replayapi" }, password: { password: PASSWORD } },
      challenges: { webAuthN: {} },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { id } = created.body.details;
    const credentialJson = authenticator.assert(created.body.challenges.webAuthN.optionsJson, origin());
    const check = () =>
      api("PATCH", `/sessions/${id}`, { sessionToken: created.body.sessionToken, checks: { webAuthN: { credentialJson, origin: origin() } } });
    const results = await Promise.all(Array.from({ length: 6 }, check));
    expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400, 400, 400, 400]);
    for (const r of results.filter((x) => x.status === 400)) expect(r.body.message).toMatch(/checks\.web_auth_n/);
    // And one after them all: nothing left to answer.
    expect((await check()).status).toBe(400);
  });
});
