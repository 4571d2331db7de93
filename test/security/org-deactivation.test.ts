import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeOverHttp, createApp } from "../oidc/rp.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

// Security review #10: deactivating an organisation stopped only password sign-in. Every credential of its users
// must stop at once (PAT, client credentials, access and refresh tokens, browser SSO) and work again after
// reactivation.
let t: TestServer;
let acme: string;
let bot: { userId: string; token: string; secret: string };
let web: Awaited<ReturnType<typeof createApp>>;
const PASSWORD = "Secr3t!pass";
const REDIRECT = "https://rp.example.com/cb";
const SCOPE = "openid offline_access urn:svc:iam:org:project:id:svc:aud";

const admin = (method: string, path: string, body?: unknown) => rest(t.url, method, `/resources/v3alpha${path}`, { token: t.adminPat, body });
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;
const form = (path: string, body: Record<string, string>, authorization: string) =>
  rest(t.url, "POST", path, {
    body: new URLSearchParams(body).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", authorization },
  });
const token = (body: Record<string, string>, authorization: string) => form("/oauth/v2/token", body, authorization);
const clientCredentials = () =>
  token(
    { grant_type: "client_credentials", scope: `urn:svc:iam:org:project:id:svc:aud urn:svc:iam:org:project:id:${web.projectId}:aud` },
    basic("acme-bot", bot.secret),
  );
const introspect = async (accessToken: string) =>
  (await form("/oauth/v2/introspect", { token: accessToken }, basic(web.clientId, web.clientSecret))).body.active as boolean;
/** An authenticated API call with the credential: 200, or 401 once it is refused. */
const api = async (credential: string) => (await rest(t.url, "GET", `/resources/v3alpha/organizations/${acme}`, { token: credential })).status;
const userinfo = async (accessToken: string) => (await rest(t.url, "GET", "/oidc/v1/userinfo", { token: accessToken })).status;
const authorizeParams = () => ({ client_id: web.clientId, response_type: "code", redirect_uri: REDIRECT, scope: SCOPE, state: "s", nonce: "n" });
/** Browser SSO without interaction: the error or the code the client gets. */
async function silentSignIn(agent: string) {
  const r = await rest(t.url, "GET", `/oauth/v2/authorize?${new URLSearchParams({ ...authorizeParams(), prompt: "none" })}`, { headers: { cookie: agent } });
  return new URL(r.headers.location!).searchParams;
}

beforeAll(async () => {
  t = await startTestServer();
  acme = (await admin("POST", "/organizations", { name: "Acme" })).body.details.id;
  const svc = await t.serviceUser("acme-bot", [{ type: "org", id: acme, roles: ["ORG_OWNER"] }], acme);
  bot = { ...svc, secret: (await admin("POST", `/users/${svc.userId}/_generate_secret`)).body.clientSecret };
  const carol = await rest(t.url, "POST", `/resources/v3alpha/users?ctx.org_id=${acme}`, {
    token: t.adminPat,
    body: {
      username: "carol",
      human: {
        profile: { givenName: "Carol", familyName: "Acme" },
        email: { address: "carol@example.com", isVerified: true },
        password: { password: PASSWORD },
      },
    },
  });
  expect(carol.status, JSON.stringify(carol.body)).toBe(201);
  web = await createApp(t, "web", {
    redirectUris: [REDIRECT],
    grantTypes: ["OIDC_GRANT_TYPE_AUTHORIZATION_CODE", "OIDC_GRANT_TYPE_REFRESH_TOKEN"],
    appType: "OIDC_APP_TYPE_WEB",
    authMethodType: "OIDC_AUTH_METHOD_TYPE_BASIC",
  });
});
afterAll(() => t?.close());

describe("deactivating an organisation (security review #10)", () => {
  it("stops every credential of its users at once, and reactivation restores what was not revoked", async () => {
    const webAuth = basic(web.clientId, web.clientSecret);
    const signedIn = await codeOverHttp(t, authorizeParams(), "carol", PASSWORD);
    const issued = await token({ grant_type: "authorization_code", code: signedIn.code, redirect_uri: REDIRECT }, webAuth);
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    const carol = { access: issued.body.access_token as string, refresh: issued.body.refresh_token as string };
    const cc = await clientCredentials();
    expect(cc.status, JSON.stringify(cc.body)).toBe(200);
    const botAccess = cc.body.access_token as string;
    // Everything works before.
    expect(await api(bot.token)).toBe(200);
    expect(await api(botAccess)).toBe(200);
    expect(await introspect(botAccess)).toBe(true);
    expect(await introspect(carol.access)).toBe(true);
    expect(await userinfo(carol.access)).toBe(200);
    expect((await silentSignIn(signedIn.agent)).get("code")).toBeTruthy();

    expect((await admin("POST", `/organizations/${acme}/_deactivate`)).status).toBe(200);

    expect(await api(bot.token)).toBe(401);
    const refused = await clientCredentials();
    expect(refused.body.error).toBe("invalid_client");
    expect(await introspect(botAccess)).toBe(false);
    expect(await api(botAccess)).toBe(401);
    expect(await introspect(carol.access)).toBe(false);
    expect(await api(carol.access)).toBe(401);
    expect(await userinfo(carol.access)).toBe(401);
    const refresh = await token({ grant_type: "refresh_token", refresh_token: carol.refresh }, webAuth);
    expect(refresh.body.error).toBe("invalid_grant");
    expect((await silentSignIn(signedIn.agent)).get("error")).toBe("login_required");
    // Nor can Carol sign in again with her password (the one check that was there before).
    await expect(codeOverHttp(t, authorizeParams(), "carol", PASSWORD)).rejects.toThrow(/401/);

    expect((await admin("POST", `/organizations/${acme}/_reactivate`)).status).toBe(200);

    expect(await api(bot.token)).toBe(200);
    expect((await clientCredentials()).status).toBe(200);
    expect(await introspect(botAccess)).toBe(true);
    expect(await introspect(carol.access)).toBe(true);
    expect(await userinfo(carol.access)).toBe(200);
    // The refused refresh revoked nothing: the grant works again.
    const again = await token({ grant_type: "refresh_token", refresh_token: carol.refresh }, webAuth);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect((await silentSignIn(signedIn.agent)).get("code")).toBeTruthy();
  });
});
