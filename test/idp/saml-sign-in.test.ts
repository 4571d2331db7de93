import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/browser.js";
import { rest } from "../support/clients.js";
import { EVIL_NAME_ID, type SamlIdp, startSamlIdp } from "../support/saml-idp.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { newPage } from "../oidc/rp.js";

/**
 * Sign-in through a SAML 2.0 identity provider in the hosted login UI: a real IdP (test/support/saml-idp.ts, signing
 * with its own key) on another site (localhost, while the server is 127.0.0.1), so that its POST back to the
 * assertion consumer service is cross-site and carries no SameSite cookie; both bindings; forged and replayed
 * responses refused.
 */
let t: TestServer;
let idp: SamlIdp;
let browser: Browser;

const api = (method: string, path: string, body?: unknown, token = t.adminPat) =>
  rest(t.url, method, `/resources/v3alpha${path}`, { token, ...(body ? { body } : {}) });

/** The IdP's metadata with its single sign-on service on another site than this server's. */
const crossSiteMetadata = () => idp.metadataXml.replaceAll(`Location="${idp.ssoUrl}"`, `Location="${idp.ssoUrl.replace("127.0.0.1", "localhost")}"`);

async function createProvider(
  name: string,
  binding: "SAML_BINDING_REDIRECT" | "SAML_BINDING_POST",
  options: Record<string, unknown> = { isAutoCreation: true },
) {
  const r = await api("POST", "/idps/saml", { idp: { name, options }, config: { metadata_xml: crossSiteMetadata(), binding } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.details.id as string;
}
const deactivate = (id: string) => api("PATCH", `/idps/saml/${id}`, { idp: { state_policy: "STATE_POLICY_DEACTIVATE" } });

/** From the login page's button through the IdP (which answers at once) back to this server: the final page. */
async function signInThrough(page: Page, provider: string) {
  await page.goto(`${t.url}/ui/login?prompt=login`);
  const answer = await Promise.all([outcome(page), page.click(`button.idp:has-text("${provider}")`)]);
  await page.waitForLoadState();
  return { status: answer[0].status(), text: (await page.textContent("main")) ?? "" };
}

/** The answer that decides: the callback's refusal, or the page it moved the browser on to (continuePage). */
const outcome = (page: Page) =>
  page.waitForResponse((r) => (r.url().startsWith(`${t.url}/idps/callback`) && r.status() >= 400) || r.url().startsWith(`${t.url}/ui/login/idp/continue`));

const userNamed = (loginName: string) => t.server.db.prisma.user.findFirst({ where: { instanceId: t.instanceId, loginName } });

beforeAll(async () => {
  t = await startTestServer();
  idp = await startSamlIdp();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await idp?.close();
  await t?.close();
});

describe("sign-in through a SAML identity provider", () => {
  let redirectIdp: string;

  it("publishes the service provider's metadata and ACS in the get", async () => {
    redirectIdp = await createProvider("Corp SAML", "SAML_BINDING_REDIRECT");
    const got = await api("GET", `/idps/saml/${redirectIdp}`);
    expect(got.body.idp.callbackUrl).toBe(`${t.url}/idps/${redirectIdp}/saml/acs`);
    const metadata = await fetch(got.body.idp.serviceProviderMetadataUrl);
    expect(metadata.status).toBe(200);
    const xml = await metadata.text();
    expect(xml).toContain(`entityID="${t.url}/idps/${redirectIdp}/saml/metadata"`);
    expect(xml).toContain(`Location="${t.url}/idps/${redirectIdp}/saml/acs"`);
    expect(xml).toMatch(/<ds:X509Certificate>[A-Za-z0-9+/=]{200,}<\/ds:X509Certificate>/);
    // an ID no provider can have (a NUL in the path) is a 404 page, never a database error
    expect((await fetch(`${t.url}/idps/%00/saml/metadata`)).status).toBe(404);
    // the same certificate every time: the IdP imports it once
    expect(await (await fetch(got.body.idp.serviceProviderMetadataUrl)).text()).toBe(xml);
  });

  it("signs in through the redirect binding; the cross-site POST to the ACS completes; the account is created and linked", async () => {
    idp.setUser({ nameId: "sam@saml.example.com", attributes: { email: "sam@saml.example.com", givenName: "Sam", surname: "Saml", uid: "sam" } });
    const { page, ctx } = await newPage(browser, true);
    const { status, text } = await signInThrough(page, "Corp SAML");
    expect(status, text).toBeLessThan(400);
    const request = idp.requests.at(-1)!;
    expect(request).toMatchObject({
      binding: "redirect",
      acsUrl: `${t.url}/idps/${redirectIdp}/saml/acs`,
      issuer: `${t.url}/idps/${redirectIdp}/saml/metadata`,
    });
    const sam = (await userNamed("sam"))!;
    expect(sam).toMatchObject({ givenName: "Sam", familyName: "Saml", email: "sam@saml.example.com", emailVerified: false });
    expect(await t.server.db.prisma.userIdpLink.findMany({ where: { userId: sam.id } })).toMatchObject([
      { idpId: redirectIdp, externalUserId: "sam@saml.example.com" },
    ]);
    await ctx.close();
  });

  it("refuses an unsigned response and a wrapped one, and a response posted again", async () => {
    for (const variant of ["unsigned", "wrapped"] as const) {
      idp.setVariant(variant);
      idp.setUser({ nameId: "mallory@saml.example.com", attributes: { uid: "mallory" } });
      const { page, ctx } = await newPage(browser, true);
      const { status } = await signInThrough(page, "Corp SAML");
      expect(status, variant).toBeGreaterThanOrEqual(400);
      await ctx.close();
    }
    idp.setVariant("valid");
    expect(await userNamed("mallory")).toBeNull();
    expect(await t.server.db.prisma.user.findFirst({ where: { email: EVIL_NAME_ID } })).toBeNull();

    // a valid response for a round trip already completed: no round trip waits for it
    const request = idp.requests.at(-1)!;
    const replay = idp.response({ acsUrl: request.acsUrl, audience: request.issuer, inResponseTo: request.id, nameId: "sam@saml.example.com" });
    const posted = await fetch(request.acsUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ SAMLResponse: replay, RelayState: request.relayState ?? "" }),
      redirect: "manual",
    });
    expect(posted.status).toBe(400);
  });

  it("sends the request by the POST binding through a page with a button, no script", async () => {
    await deactivate(redirectIdp);
    await createProvider("Post SAML", "SAML_BINDING_POST");
    idp.setUser({ nameId: "pat@saml.example.com", attributes: { email: "pat@saml.example.com", uid: "pat" } });
    const { page, ctx } = await newPage(browser, true);
    await page.goto(`${t.url}/ui/login?prompt=login`);
    const [toProvider] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith("/ui/login/idp/start")),
      page.click('button.idp:has-text("Post SAML")'),
    ]);
    const html = await toProvider.text();
    expect(html).not.toContain("<script");
    expect(toProvider.headers()["content-security-policy"]).not.toContain("unsafe-inline");
    const back = outcome(page);
    await page.click("#continue");
    expect((await back).status()).toBeLessThan(400);
    expect(idp.requests.at(-1)!.binding).toBe("post");
    expect(await userNamed("pat")).not.toBeNull();
    await ctx.close();
  });

  it("serves intents: post_form for the POST binding, auth_url for the redirect binding", async () => {
    await api("PATCH", `/idps/saml/${redirectIdp}`, { idp: { state_policy: "STATE_POLICY_ACTIVATE" } });
    const loginClient = (await t.serviceUser("saml-login-client", [{ type: "instance", id: t.instanceId, roles: ["IAM_LOGIN_CLIENT"] }])).token;
    const start = (id: string) => api("POST", "/idp_intents", { idp_id: id, success_url: `${t.url}/ok`, failure_url: `${t.url}/failed` }, loginClient);
    const viaRedirect = await start(redirectIdp);
    expect(viaRedirect.status, JSON.stringify(viaRedirect.body)).toBe(201);
    expect(viaRedirect.body.authUrl).toContain("/sso?SAMLRequest=");
    const search = await api("POST", "/idps/_search", {});
    const postIdp = (search.body.result as { details: { id: string }; idp: { name: string } }[]).find((r) => r.idp.name === "Post SAML")!.details.id;
    const viaPost = await start(postIdp);
    expect(viaPost.body.postForm).toMatch(/<form method="post" action="http:\/\/localhost:\d+\/sso">/);
    expect(viaPost.body.postForm).toContain('name="SAMLRequest"');
  });
});
