import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeOverHttp, createApp } from "../oidc/rp.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

// Security review #13: the access tokens of a deleted user stayed valid until they expired (12 h by default),
// because a missing user was taken for an application subject. No grant issues tokens to anything but a user.
let t: TestServer;
let resource: { clientId: string; clientSecret: string; projectId: string };
const PASSWORD = "Secr3t!pass";
const REDIRECT = "https://rp.example.com/cb";

const admin = (method: string, path: string, body?: unknown) => rest(t.url, method, `/resources/v3alpha${path}`, { token: t.adminPat, body });
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;
const form = (path: string, body: Record<string, string>, authorization: string) =>
  rest(t.url, "POST", path, { body: new URLSearchParams(body).toString(), headers: { "content-type": "application/x-www-form-urlencoded", authorization } });
const introspect = async (token: string) =>
  (await form("/oauth/v2/introspect", { token }, basic(resource.clientId, resource.clientSecret))).body.active as boolean;
const api = async (token: string) => (await rest(t.url, "GET", "/settings/v3alpha/login", { token })).status;

beforeAll(async () => {
  t = await startTestServer();
  resource = await createApp(t, "web", {
    redirectUris: [REDIRECT],
    grantTypes: ["OIDC_GRANT_TYPE_AUTHORIZATION_CODE", "OIDC_GRANT_TYPE_REFRESH_TOKEN"],
    appType: "OIDC_APP_TYPE_WEB",
    authMethodType: "OIDC_AUTH_METHOD_TYPE_BASIC",
  });
});
afterAll(() => t?.close());

describe("a deleted user's tokens (security review #13)", () => {
  it("a machine user's client-credentials token is inactive once the user is deleted", async () => {
    const svc = await t.serviceUser("temp-svc", [{ type: "instance", id: t.instanceId, roles: ["IAM_OWNER_VIEWER"] }]);
    const secret = (await admin("POST", `/users/${svc.userId}/_generate_secret`)).body.clientSecret as string;
    const scope = `urn:svc:iam:org:project:id:svc:aud urn:svc:iam:org:project:id:${resource.projectId}:aud`;
    const issued = await form("/oauth/v2/token", { grant_type: "client_credentials", scope }, basic("temp-svc", secret));
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    const token = issued.body.access_token as string;
    expect(await introspect(token)).toBe(true);
    expect(await api(token)).toBe(200);

    expect((await admin("DELETE", `/users/${svc.userId}`)).status).toBe(200);

    expect(await introspect(token)).toBe(false);
    expect(await api(token)).toBe(401);
  });

  it("a human's grants are revoked with the user: access and refresh tokens", async () => {
    const created = await admin("POST", "/users", {
      username: "dora",
      human: { profile: { givenName: "Dora", familyName: "Gone" }, email: { address: "dora@example.com", isVerified: true }, password: { password: PASSWORD } },
    });
    const params = { client_id: resource.clientId, response_type: "code", redirect_uri: REDIRECT, scope: "openid offline_access", state: "s", nonce: "n" };
    const { code } = await codeOverHttp(t, params, "dora", PASSWORD);
    const auth = basic(resource.clientId, resource.clientSecret);
    const issued = await form("/oauth/v2/token", { grant_type: "authorization_code", code, redirect_uri: REDIRECT }, auth);
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    expect(await introspect(issued.body.access_token)).toBe(true);

    expect((await admin("DELETE", `/users/${created.body.details.id}`)).status).toBe(200);

    expect(await introspect(issued.body.access_token)).toBe(false);
    expect((await form("/oauth/v2/token", { grant_type: "refresh_token", refresh_token: issued.body.refresh_token }, auth)).body.error).toBe("invalid_grant");
    // Revoked where it is stored, not only refused while the user is missing.
    const grants = await t.server.db.prisma.refreshToken.findMany({ where: { userId: created.body.details.id } });
    expect(grants.length).toBeGreaterThan(0);
    expect(grants.every((g) => g.revoked)).toBe(true);
  });
});
