import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/browser.js";
import { rest } from "../support/clients.js";
import { type ExternalOp, startExternalOp } from "../support/external-op.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { addHuman, newPage, startRedirectCatcher } from "../oidc/rp.js";

/**
 * The intents API for custom login UIs: an intent sends the browser to a real provider (oidc-provider) and back to
 * the caller's success URL; the caller retrieves what the provider said and signs the linked user in with a
 * session's idp_intent check, once.
 */
let t: TestServer;
let op: ExternalOp;
let browser: Browser;
let catcher: Awaited<ReturnType<typeof startRedirectCatcher>>;
let loginClient: string;
let idpId: string;

const api = (method: string, path: string, body?: unknown, token = loginClient) =>
  rest(t.url, method, `/resources/v3alpha${path}`, { token, ...(body ? { body } : {}) });

/** The provider's development login (any password), and its consent on a first sign-in there. */
async function atProvider(page: Page, login: string) {
  await page.fill("input[name=login]", login);
  await page.fill("input[name=password]", "anything");
  await page.click("button[type=submit]");
  const consent = page.locator("input[name=prompt][value=consent]");
  await Promise.race([page.waitForURL((u) => u.href.startsWith(catcher.origin)), consent.waitFor({ state: "attached" })]);
  if (await consent.count()) await page.click("button[type=submit]");
  await page.waitForURL((u) => u.href.startsWith(catcher.origin));
  return new URL(page.url());
}

async function startIntent(provider = idpId) {
  const r = await api("POST", "/idp_intents", { idp_id: provider, success_url: `${catcher.origin}/ok`, failure_url: `${catcher.origin}/failed` });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { details: { id: string }; authUrl: string };
}

beforeAll(async () => {
  t = await startTestServer();
  op = await startExternalOp(`${t.url}/idps/callback`);
  browser = await launchChromium();
  catcher = await startRedirectCatcher();
  loginClient = (await t.serviceUser("login-client", [{ type: "instance", id: t.instanceId, roles: ["IAM_LOGIN_CLIENT"] }])).token;
  const created = await rest(t.url, "POST", "/resources/v3alpha/idps/oidc", {
    token: t.adminPat,
    body: { idp: { name: "Intent SSO" }, config: { issuer: op.issuer, client_id: op.clientId, client_secret: op.clientSecret, use_pkce: true } },
  });
  expect(created.status).toBe(201);
  idpId = created.body.details.id;
});
afterAll(async () => {
  await browser?.close();
  await catcher?.close();
  await op?.close();
  await t?.close();
});

describe("the intents API", () => {
  it("sends the browser to the provider and back to success_url; retrieve says who it was; a session signs the linked user in once", async () => {
    const intent = await startIntent();
    expect(new URL(intent.authUrl).origin).toBe(op.issuer);
    expect(new URL(intent.authUrl).searchParams.get("code_challenge_method")).toBe("S256");
    const { page, ctx } = await newPage(browser);
    await page.goto(intent.authUrl);
    const back = await atProvider(page, "erin");
    expect(back.pathname).toBe("/ok");
    expect(back.searchParams.get("id")).toBe(intent.details.id);
    const token = back.searchParams.get("token")!;

    // not linked yet: the provider's information, no user of ours
    const got = await api("POST", `/idp_intents/${intent.details.id}/_retrieve`, { idp_intent_token: token });
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(got.body.userId ?? "").toBe("");
    expect(got.body.idpInformation).toMatchObject({ idpId, userId: "erin", userName: "erin", rawInformation: { sub: "erin", email: "erin@ext.example.com" } });
    expect(got.body.idpInformation.accessToken).toBeTruthy();
    expect(got.body.idpInformation.idToken.split(".")).toHaveLength(3);
    // the token is the key: a wrong one finds nothing
    expect((await api("POST", `/idp_intents/${intent.details.id}/_retrieve`, { idp_intent_token: "wrong" })).status).toBe(404);

    // the login UI links the account to a user, then checks the intent in a session
    const erin = await addHuman(t, "erin", "Secr3t!pass");
    expect(
      (
        await rest(t.url, "POST", `/resources/v3alpha/users/${erin}/idp_links`, {
          token: t.adminPat,
          body: { idp_id: idpId, user_id: "erin", user_name: "erin" },
        })
      ).status,
    ).toBe(200);
    expect((await api("POST", `/idp_intents/${intent.details.id}/_retrieve`, { idp_intent_token: token })).body.userId).toBe(erin);
    const checks = { user: { user_id: erin }, idp_intent: { idp_intent_id: intent.details.id, idp_intent_token: token } };
    const session = await api("POST", "/sessions", { checks });
    expect(session.status, JSON.stringify(session.body)).toBe(201);
    const read = await api("GET", `/sessions/${session.body.details.id}`);
    expect(read.body.session.factors.intent).toMatchObject({ idpId, verifiedAt: expect.any(String) });
    // single use
    const again = await api("POST", "/sessions", { checks });
    expect(again.status).toBe(400);
    expect(again.body.message).toMatch(/checks\.idp_intent/);
    await ctx.close();
  });

  it("refuses an intent whose account is linked to another user, and sends a refusal at the provider to failure_url", async () => {
    const intent = await startIntent();
    const { page, ctx } = await newPage(browser);
    await page.goto(intent.authUrl);
    const back = await atProvider(page, "fay");
    const token = back.searchParams.get("token")!;
    const other = await addHuman(t, "gus", "Secr3t!pass");
    const refused = await api("POST", "/sessions", {
      checks: { user: { user_id: other }, idp_intent: { idp_intent_id: intent.details.id, idp_intent_token: token } },
    });
    expect(refused.status).toBe(400);

    // the provider answers with an error (the user cancelled there): failure_url with an OAuth error, never its text
    const failing = await startIntent();
    const state = new URL(failing.authUrl).searchParams.get("state")!;
    await page.goto(`${t.url}/idps/callback?${new URLSearchParams({ state, error: "access_denied", error_description: "secret detail", iss: op.issuer })}`);
    await page.waitForURL((u) => u.href.startsWith(catcher.origin));
    const failed = new URL(page.url());
    expect(failed.pathname).toBe("/failed");
    expect(failed.searchParams.get("id")).toBe(failing.details.id);
    expect(failed.searchParams.get("error")).toBe("access_denied");
    expect(failed.search).not.toContain("secret");
    // and a failed intent retrieves nothing
    expect((await api("POST", `/idp_intents/${failing.details.id}/_retrieve`, { idp_intent_token: "x" })).status).toBe(404);
    await ctx.close();
  });

  it("signs no one in through a provider the user's organisation deactivated (as the login UI refuses it)", async () => {
    const intent = await startIntent();
    const { page, ctx } = await newPage(browser);
    await page.goto(intent.authUrl);
    const token = (await atProvider(page, "hugo")).searchParams.get("token")!;
    const hugo = await addHuman(t, "hugo", "Secr3t!pass");
    await rest(t.url, "POST", `/resources/v3alpha/users/${hugo}/idp_links`, { token: t.adminPat, body: { idp_id: idpId, user_id: "hugo" } });
    const policy = (p: string) =>
      rest(t.url, "PATCH", `/resources/v3alpha/idps/oidc/${idpId}?ctx.org_id=${t.defaultOrgId}`, { token: t.adminPat, body: { idp: { state_policy: p } } });
    expect((await policy("STATE_POLICY_DEACTIVATE")).status).toBe(200);
    const checks = { user: { user_id: hugo }, idp_intent: { idp_intent_id: intent.details.id, idp_intent_token: token } };
    const refused = await api("POST", "/sessions", { checks });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/not active in the user's organisation/);
    // the refusal did not use the intent up
    expect((await policy("STATE_POLICY_INHERIT")).status).toBe(200);
    expect((await api("POST", "/sessions", { checks })).status).toBe(201);
    await ctx.close();
  });

  it("needs session.write, names missing fields, and starts nothing for an inactive provider", async () => {
    const viewer = (await t.serviceUser("viewer", [{ type: "instance", id: t.instanceId, roles: ["IAM_OWNER_VIEWER"] }])).token;
    expect((await api("POST", "/idp_intents", { idp_id: idpId, success_url: "https://a.example/ok", failure_url: "https://a.example/f" }, viewer)).status).toBe(
      403,
    );
    const missing = await api("POST", "/idp_intents", { idp_id: idpId });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toMatch(/success_url/);
    const bad = await api("POST", "/idp_intents", { idp_id: idpId, success_url: "javascript:alert(1)", failure_url: "https://a.example/f" });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/success_url/);
    await rest(t.url, "PATCH", `/resources/v3alpha/idps/oidc/${idpId}`, { token: t.adminPat, body: { idp: { state_policy: "STATE_POLICY_DEACTIVATE" } } });
    expect((await api("POST", "/idp_intents", { idp_id: idpId, success_url: "https://a.example/ok", failure_url: "https://a.example/f" })).status).toBe(404);
    await rest(t.url, "PATCH", `/resources/v3alpha/idps/oidc/${idpId}`, { token: t.adminPat, body: { idp: { state_policy: "STATE_POLICY_ACTIVATE" } } });
  });

  it("is served over Connect as well (one set of protos)", async () => {
    const r = await fetch(`${t.url}/svc.resources.idp.v3alpha.IdentityProviderIntentService/StartIDPIntent`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${loginClient}` },
      body: JSON.stringify({ idpId, successUrl: "https://a.example/ok", failureUrl: "https://a.example/f" }),
    });
    expect(r.status).toBe(200);
    expect(((await r.json()) as { authUrl: string }).authUrl).toContain(op.issuer);
  });
});
