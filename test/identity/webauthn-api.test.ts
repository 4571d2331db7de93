import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/browser.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { addHuman, webApp } from "../oidc/rp.js";

let t: TestServer;
let browser: Browser;
let page: Page;

/** WebAuthn needs a domain as RP ID: the API is called on the instance's "localhost" domain. */
const host = () => `localhost:${t.port}`;
const origin = () => `http://${host()}`;
const api = (method: string, path: string, body?: unknown, token = t.adminPat) =>
  rest(t.url, method, `/resources/v3alpha${path}`, { token, host: host(), ...(body ? { body } : {}) });

beforeAll(async () => {
  t = await startTestServer();
  browser = await launchChromium();
  // A page of the RP's origin with Chromium's virtual authenticator, to answer the options like a browser would.
  const ctx = await browser.newContext({ bypassCSP: true });
  page = await ctx.newPage();
  const cdp = await ctx.newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: { protocol: "ctap2", transport: "usb", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  await page.goto(`${origin()}/ui/login`);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** navigator.credentials.create() with the server's options, answered as RegistrationResponseJSON. */
function register(optionsJson: string): Promise<string> {
  return page.evaluate(async (json) => {
    const b64 = (buf: ArrayBuffer) =>
      btoa(String.fromCharCode(...new Uint8Array(buf)))
        .replace(/\+/g, "-")
        .replace(/\//g, "_")
        .replace(/=+$/, "");
    const bytes = (s: string) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
    const o = JSON.parse(json);
    const c = (await navigator.credentials.create({
      publicKey: { ...o, challenge: bytes(o.challenge), user: { ...o.user, id: bytes(o.user.id) }, excludeCredentials: [] },
    })) as PublicKeyCredential;
    const r = c.response as AuthenticatorAttestationResponse;
    return JSON.stringify({
      id: c.id,
      rawId: b64(c.rawId),
      type: c.type,
      clientExtensionResults: {},
      response: { clientDataJSON: b64(r.clientDataJSON), attestationObject: b64(r.attestationObject), transports: r.getTransports() },
    });
  }, optionsJson);
}

describe("WebAuthn registration through the user API", () => {
  it("refused while the login settings do not allow security keys; then start, finish, list, remove", async () => {
    const id = await addHuman(t, "apikey", "Secr3t!pass");
    expect((await api("POST", `/users/${id}/webauthn_keys/_start`, {})).status).toBe(400);

    const patched = await rest(t.url, "PATCH", "/settings/v3alpha/login", { token: t.adminPat, body: { secondFactors: { set: { value: ["otp", "u2f"] } } } });
    expect(patched.status).toBe(200);
    const started = await api("POST", `/users/${id}/webauthn_keys/_start`, {});
    expect(started.status).toBe(200);
    const options = JSON.parse(started.body.optionsJson);
    expect(options.rp.id).toBe("localhost");
    expect(started.body.registrationToken).toBeTruthy();

    const credentialJson = await register(started.body.optionsJson);
    const finished = await api("POST", `/users/${id}/webauthn_keys/_finish`, {
      registrationToken: started.body.registrationToken,
      credentialJson,
      origin: origin(),
      name: "My key",
    });
    expect(finished.status).toBe(201);
    const keyId = finished.body.keyId as string;
    const row = await t.server.db.prisma.userWebauthnKey.findUniqueOrThrow({ where: { id: keyId } });
    expect(row.passwordless).toBe(false);
    expect(row.credentialId).toBe(JSON.parse(credentialJson).id);

    const listed = await api("GET", `/users/${id}/webauthn_keys`);
    expect(listed.status).toBe(200);
    expect(listed.body.keys).toMatchObject([{ id: keyId, name: "My key" }]);

    // The same attestation against another registration's challenge: refused, naming credential_json.
    const again = await api("POST", `/users/${id}/webauthn_keys/_start`, {});
    const replay = await api("POST", `/users/${id}/webauthn_keys/_finish`, {
      registrationToken: again.body.registrationToken,
      credentialJson,
      origin: origin(),
    });
    expect(replay.status).toBe(400);
    expect(JSON.stringify(replay.body)).toContain("credential_json");

    expect((await api("DELETE", `/users/${id}/webauthn_keys/${keyId}`)).status).toBe(200);
    expect((await api("GET", `/users/${id}/webauthn_keys`)).body.keys ?? []).toEqual([]);
    expect((await api("DELETE", `/users/${id}/webauthn_keys/${keyId}`)).status).toBe(404);
  });

  it("bad input names the field; callers without user.write are refused", async () => {
    const id = await addHuman(t, "apibad", "Secr3t!pass");
    const started = await api("POST", `/users/${id}/webauthn_keys/_start`, {});
    const token = started.body.registrationToken as string;
    const finish = (body: object) => api("POST", `/users/${id}/webauthn_keys/_finish`, body);

    const cases: [object, string][] = [
      [{ registrationToken: token, origin: origin() }, "credential_json"],
      [{ registrationToken: token, credentialJson: "not json", origin: origin() }, "credential_json"],
      [{ registrationToken: "v1.forged", credentialJson: "{}", origin: origin() }, "registration_token"],
      [{ registrationToken: token, credentialJson: "{}", origin: "https://evil.example" }, "origin"],
      [{ registrationToken: token, credentialJson: "{}", origin: origin() }, "credential_json"],
    ];
    for (const [body, field] of cases) {
      const r = await finish(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(r.body)).toContain(field);
    }
    // Another user's token does not register for this one.
    const other = await addHuman(t, "apiother", "Secr3t!pass");
    const foreign = await api("POST", `/users/${other}/webauthn_keys/_finish`, { registrationToken: token, credentialJson: "{}", origin: origin() });
    expect(foreign.status).toBe(400);
    expect(JSON.stringify(foreign.body)).toContain("registration_token");

    const outsider = await t.serviceUser("no-rights-webauthn");
    expect((await api("POST", `/users/${id}/webauthn_keys/_start`, {}, outsider.token)).status).toBe(403);
    expect((await api("GET", `/users/${id}/webauthn_keys`, undefined, outsider.token)).status).toBe(403);
    expect((await api("DELETE", `/users/${id}/webauthn_keys/x`, undefined, outsider.token)).status).toBe(403);
  });
});

/** navigator.credentials.get() with the server's options, answered as AuthenticationResponseJSON. */
function assert(optionsJson: string): Promise<string> {
  return page.evaluate(async (json) => {
    const b64 = (buf: ArrayBuffer) =>
      btoa(String.fromCharCode(...new Uint8Array(buf)))
        .replace(/\+/g, "-")
        .replace(/\//g, "_")
        .replace(/=+$/, "");
    const bytes = (s: string) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
    const o = JSON.parse(json);
    const allow = (o.allowCredentials ?? []).map((c: { id: string; type: string }) => ({ ...c, id: bytes(c.id) }));
    const c = (await navigator.credentials.get({ publicKey: { ...o, challenge: bytes(o.challenge), allowCredentials: allow } })) as PublicKeyCredential;
    const r = c.response as AuthenticatorAssertionResponse;
    return JSON.stringify({
      id: c.id,
      rawId: b64(c.rawId),
      type: c.type,
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64(r.clientDataJSON),
        authenticatorData: b64(r.authenticatorData),
        signature: b64(r.signature),
        ...(r.userHandle ? { userHandle: b64(r.userHandle) } : {}),
      },
    });
  }, optionsJson);
}

describe("WebAuthn checks in sessions (custom login UIs)", () => {
  /** Registers a security key, or a passkey, for the user through the user API. */
  async function registered(userId: string, passwordless: boolean) {
    const started = await api("POST", `/users/${userId}/webauthn_keys/_start`, { passwordless });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const credentialJson = await register(started.body.optionsJson);
    const finished = await api("POST", `/users/${userId}/webauthn_keys/_finish`, {
      registrationToken: started.body.registrationToken,
      credentialJson,
      origin: origin(),
    });
    expect(finished.status, JSON.stringify(finished.body)).toBe(201);
  }
  const amrOf = async (id: string) => (await t.server.db.prisma.loginSession.findUniqueOrThrow({ where: { id } })).amr;

  it("a security key after the password is a second factor; its assertion is single use and bound to the origin's domain", async () => {
    await rest(t.url, "PATCH", "/settings/v3alpha/login", { token: t.adminPat, body: { secondFactors: { set: { value: ["otp", "u2f"] } } } });
    const userId = await addHuman(t, "sesskey", "Secr3t!pass");
    await registered(userId, false);

    const created = await api("POST", "/sessions", {
      checks: { user: { loginName: "sesskey" }, password: { password: "Secr3t!pass" } },
      challenges: { webAuthN: {} },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { id } = created.body.details;
    const token = created.body.sessionToken;
    const options = JSON.parse(created.body.challenges.webAuthN.optionsJson);
    expect(options.rpId).toBe("localhost");
    expect(options.allowCredentials).toHaveLength(1);

    const credentialJson = await assert(created.body.challenges.webAuthN.optionsJson);
    // Bad input names the field and leaves the challenge open.
    for (const bad of ["not json", "null", "[]", "{}"]) {
      const r = await api("PATCH", `/sessions/${id}`, { sessionToken: token, checks: { webAuthN: { credentialJson: bad, origin: origin() } } });
      expect(r.status, bad).toBe(400);
      expect(r.body.message).toContain("checks.web_auth_n.credential_json");
    }
    const elsewhere = await api("PATCH", `/sessions/${id}`, { sessionToken: token, checks: { webAuthN: { credentialJson, origin: "https://evil.example" } } });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.message).toContain("checks.web_auth_n.origin");
    const checked = await api("PATCH", `/sessions/${id}`, { sessionToken: token, checks: { webAuthN: { credentialJson, origin: origin() } } });
    expect(checked.status, JSON.stringify(checked.body)).toBe(200);
    const session = (await api("GET", `/sessions/${id}`)).body.session;
    expect(session.factors.webAuthN.verifiedAt).toBeTruthy();
    expect(session.factors.webAuthN.userVerified ?? false).toBe(false);
    expect(await amrOf(id)).toEqual(["pwd", "hwk", "mfa"]);

    // The challenge was used up: the same assertion again has nothing to answer.
    const replay = await api("PATCH", `/sessions/${id}`, { sessionToken: token, checks: { webAuthN: { credentialJson, origin: origin() } } });
    expect(replay.status).toBe(400);
    expect(replay.body.message).toContain("no open WebAuthn challenge");
    // A fresh challenge answered with the old assertion: its signature is over another challenge.
    await api("PATCH", `/sessions/${id}`, { sessionToken: token, challenges: { webAuthN: {} } });
    const stale = await api("PATCH", `/sessions/${id}`, { sessionToken: token, checks: { webAuthN: { credentialJson, origin: origin() } } });
    expect(stale.status).toBe(400);
    expect(stale.body.message).toContain("checks.web_auth_n.credential_json");
  });

  it("a passkey with user verification signs the user in alone; it must be allowed", async () => {
    const userId = await addHuman(t, "sesspasskey", "Secr3t!pass");
    const refused = await api("POST", "/sessions", { checks: { user: { userId } }, challenges: { webAuthN: { userVerificationRequired: true } } });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain("passwordless_allowed");
    await rest(t.url, "PATCH", "/settings/v3alpha/login", { token: t.adminPat, body: { passwordlessAllowed: { set: true } } });
    await registered(userId, true);

    const created = await api("POST", "/sessions", { checks: { user: { userId } }, challenges: { webAuthN: { userVerificationRequired: true } } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { id } = created.body.details;
    const credentialJson = await assert(created.body.challenges.webAuthN.optionsJson);
    const checked = await api("PATCH", `/sessions/${id}`, {
      sessionToken: created.body.sessionToken,
      checks: { webAuthN: { credentialJson, origin: origin() } },
    });
    expect(checked.status, JSON.stringify(checked.body)).toBe(200);
    expect((await api("GET", `/sessions/${id}`)).body.session.factors.webAuthN.userVerified).toBe(true);
    expect(await amrOf(id)).toEqual(["user", "hwk", "mfa"]);

    // Without a password, the passkey session completes an authorization request of a custom login UI.
    await rest(t.url, "PATCH", "/settings/v3alpha/login", { token: t.adminPat, body: { customLoginUrl: { set: "https://login.example.com/ui" } } });
    const app = await webApp(t, { origin: "https://rp.example.com" }, "passkey-rp");
    const authorize = new URLSearchParams({ client_id: app.clientId, redirect_uri: "https://rp.example.com/cb", response_type: "code", scope: "openid" });
    const started = await fetch(`${t.url}/oauth/v2/authorize?${authorize}`, { redirect: "manual", headers: { "x-svc-login-client": "custom" } });
    const authRequest = new URL(started.headers.get("location")!).searchParams.get("authRequest");
    const callback = await api("POST", `/auth_requests/${authRequest}/_callback`, { session: { sessionId: id, sessionToken: created.body.sessionToken } });
    expect(callback.status, JSON.stringify(callback.body)).toBe(200);
    expect(new URL(callback.body.callbackUrl).searchParams.get("code")).toBeTruthy();
  });
});
