import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/browser.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { addHuman } from "../oidc/rp.js";

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
