import * as client from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addHuman, rpConfig, webApp } from "../oidc/rp.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * Security review, finding 6: the sessions API's CreateCallback checked only force_mfa, while the built-in login
 * UI also honours force_mfa_local_only (every sign-in there is local): a custom login UI signed users in with a
 * password alone. And (the review's informational point) a password that must be changed signed users in
 * through the sessions API, where the built-in UI asks for the change first.
 */
describe("the sessions API's callback enforces what the built-in login UI does", () => {
  let t: TestServer;
  let loginClient: string;
  const PASSWORD = "Correct!horse9";
  const CUSTOM_UI = "https://login.example.com/ui";
  const sessions = (method: string, path: string, body?: unknown) =>
    rest(t.url, method, `/resources/v3alpha${path}`, { token: loginClient, ...(body ? { body } : {}) });
  beforeAll(async () => {
    t = await startTestServer();
    loginClient = (await t.serviceUser("login-client", [{ type: "instance", id: t.instanceId, roles: ["IAM_LOGIN_CLIENT"] }])).token;
    expect((await rest(t.url, "PATCH", "/settings/v3alpha/login", { token: t.adminPat, body: { customLoginUrl: { set: CUSTOM_UI } } })).status).toBe(200);
  });
  afterAll(() => t?.close());

  async function authRequest(given?: { clientId: string; clientSecret: string }): Promise<string> {
    const app = given ?? (await webApp(t, { origin: "https://rp.example.com" }, `rp-${Math.random().toString(36).slice(2, 8)}`));
    const config = await rpConfig(t.url, app.clientId, app.clientSecret, client.ClientSecretBasic(app.clientSecret));
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: "https://rp.example.com/cb",
      scope: "openid",
      code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
      code_challenge_method: "S256",
    });
    const res = await fetch(url, { redirect: "manual", headers: { "x-svc-login-client": "custom" } });
    expect(res.status).toBe(303);
    return new URL(res.headers.get("location")!).searchParams.get("authRequest")!;
  }

  async function passwordSession(loginName: string) {
    const created = await sessions("POST", "/sessions", { checks: { user: { loginName }, password: { password: PASSWORD } } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return { sessionId: created.body.details.id as string, sessionToken: created.body.sessionToken as string };
  }

  it("project_role_check: a user without a grant of the client's project gets no code", async () => {
    const userId = await addHuman(t, "no-grant", PASSWORD);
    const app = await webApp(t, { origin: "https://rp.example.com" }, "checked-rp");
    const admin = { token: t.adminPat };
    expect((await rest(t.url, "PATCH", `/resources/v3alpha/projects/${app.projectId}`, { ...admin, body: { projectRoleCheck: true } })).status).toBe(200);
    const refused = await sessions("POST", `/auth_requests/${await authRequest(app)}/_callback`, { session: await passwordSession("no-grant") });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain("no grant of the application's project");
    await rest(t.url, "POST", `/resources/v3alpha/projects/${app.projectId}/roles`, { ...admin, body: { key: "member", displayName: "Member" } });
    const granted = await rest(t.url, "POST", "/resources/v3alpha/user_grants", { ...admin, body: { userId, projectId: app.projectId, roleKeys: ["member"] } });
    expect(granted.status).toBe(201);
    const done = await sessions("POST", `/auth_requests/${await authRequest(app)}/_callback`, { session: await passwordSession("no-grant") });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
  });

  it("force_mfa_local_only: a password-only session gets no code", async () => {
    await addHuman(t, "local-only", PASSWORD);
    expect((await rest(t.url, "PATCH", "/settings/v3alpha/login", { token: t.adminPat, body: { forceMfaLocalOnly: { set: true } } })).status).toBe(200);
    try {
      const refused = await sessions("POST", `/auth_requests/${await authRequest()}/_callback`, { session: await passwordSession("local-only") });
      expect(refused.status).toBe(400);
      expect(refused.body.message).toContain("second factor");
    } finally {
      await rest(t.url, "PATCH", "/settings/v3alpha/login", { token: t.adminPat, body: { forceMfaLocalOnly: { reset: true } } });
    }
    // without the setting the same kind of session completes the request
    const done = await sessions("POST", `/auth_requests/${await authRequest()}/_callback`, { session: await passwordSession("local-only") });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
  });

  it("a password that must be changed signs nobody in until it is", async () => {
    const id = await addHuman(t, "must-change", PASSWORD);
    await t.server.db.prisma.user.update({ where: { id }, data: { passwordChangeRequired: true } });
    const refused = await sessions("POST", `/auth_requests/${await authRequest()}/_callback`, { session: await passwordSession("must-change") });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain("must change its password");
  });
});
