import { generateKeyPairSync } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { afterCallback, launchChromium } from "../support/browser.js";
import { rest } from "../support/clients.js";
import { type ExternalOp, startExternalOp } from "../support/external-op.js";
import { startTestServer, type TestServer } from "../support/server.js";
import {
  ADELE,
  APPLE_AUDIENCE,
  type AppleStandIn,
  type AzureStandIn,
  type AzureUser,
  type GitHubStandIn,
  type GitHubUser,
  OCTO,
  reservePort,
  startAppleStandIn,
  startAzureStandIn,
  startGitHubStandIn,
} from "../support/vendor-stand-ins.js";
import { newPage } from "../oidc/rp.js";

/**
 * Sign-in through the vendor kinds (GitHub, GitHub Enterprise, GitLab, Google, Azure AD, Apple) in the hosted login
 * UI, each against a stand-in of its vendor on loopback (test/support/vendor-stand-ins.ts; oidc-provider for the
 * OpenID Connect ones) that SVC_IDP_ENDPOINT_OVERRIDES puts in place of the vendor's fixed origins: what the server
 * asks the vendor for (authorization and token requests), and the account it makes of the vendor's answer.
 */
let t: TestServer;
let browser: Browser;
let gh: GitHubStandIn;
let az: AzureStandIn;
let apple: AppleStandIn;
let google: ExternalOp;
let gitlab: ExternalOp;
/** The server's warnings (its reasons for refusing a provider's answer), for the failures' messages. */
const logs: string[] = [];

/** GitHub users besides octo: one whose primary address is not verified (a verified one is not primary), one of the Enterprise. */
const HUBOT: GitHubUser = {
  id: 67890,
  login: "hubot",
  name: "Hubot",
  email: null,
  emails: [
    { email: "hubot-alt@users.example", primary: false, verified: true },
    { email: "hubot@users.example", primary: true, verified: false },
  ],
};
const MONA: GitHubUser = {
  id: 424242,
  login: "mona",
  name: "Mona Lisa",
  email: "mona@ghe.example",
  emails: [{ email: "mona@ghe.example", primary: true, verified: true }],
};
/** An Azure AD user with a `mail` (the e-mail then) besides the userPrincipalName (the username). */
const BERT: AzureUser = {
  id: "aad-2",
  displayName: "Bert Bauer",
  givenName: "Bert",
  surname: "Bauer",
  mail: "bert@contoso.example",
  userPrincipalName: "bert@contoso.onmicrosoft.example",
};

/** The Apple client: its Services ID, team, and the P-256 key (PKCS#8 PEM) it signs its client secrets with. */
const appleClient = { clientId: "com.example.svc.web", teamId: "TEAM123456", keyId: "KEYID12345" };
const appleKeys = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
const applePrivateKey = appleKeys.privateKey.export({ type: "pkcs8", format: "pem" }) as string;

const api = (method: string, path: string, body?: unknown) =>
  rest(t.url, method, `/resources/v3alpha${path}`, { token: t.adminPat, ...(body ? { body } : {}) });

const callback = () => `${t.url}/idps/callback`;

/** A provider of `kind` that creates accounts; its ID. */
async function createProvider(kind: string, name: string, config: Record<string, unknown>) {
  const r = await api("POST", `/idps/${kind}`, { idp: { name, options: { isAutoCreation: true } }, config });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.details.id as string;
}

const deactivate = (kind: string, id: string) => api("PATCH", `/idps/${kind}/${id}`, { idp: { state_policy: "STATE_POLICY_DEACTIVATE" } });

/** The get of a provider: its secret (`flag`) only as set or not, never its value; the callback URL to register at the vendor. */
async function expectSecretHidden(kind: string, id: string, flag: "hasClientSecret" | "hasPrivateKey", secrets: string[]) {
  const got = await api("GET", `/idps/${kind}/${id}`);
  expect(got.status, JSON.stringify(got.body)).toBe(200);
  expect(got.body.idp.idp.config[flag]).toBe(true);
  const whole = JSON.stringify(got.body);
  for (const s of secrets) expect(whole).not.toContain(s);
  expect(got.body.idp.callbackUrl).toBe(callback());
}

/** The account linked to the provider (the one sign-in through it made): the user and its links. */
async function accountOf(idpId: string, why: () => string) {
  const links = await t.server.db.prisma.userIdpLink.findMany({ where: { instanceId: t.instanceId, idpId } });
  expect(links, `links of ${idpId}; ${why()}`).toHaveLength(1);
  const user = await t.server.db.prisma.user.findUniqueOrThrow({ where: { id: links[0]!.userId } });
  return { user, links };
}

/** What happened at this server's callback in a page (its statuses), and the server's warnings since `from`. */
function watch(page: Page) {
  const from = logs.length;
  const answers: string[] = [];
  page.on("response", (r) => {
    if (r.url().startsWith(callback())) answers.push(`${r.request().method()} ${r.status()}`);
  });
  return () => `callback: [${answers.join(", ")}], page: ${page.url()}, server: ${logs.slice(from).join("") || "(no warnings)"}`;
}

/** Runs `action` and waits for the main frame's next page (after redirects) to load. */
async function nextPage(page: Page, action: () => Promise<unknown>) {
  const navigated = page.waitForEvent("framenavigated", { predicate: (f) => f === page.mainFrame(), timeout: 20_000 });
  try {
    await action();
  } catch (e) {
    navigated.catch(() => undefined);
    throw e;
  }
  await navigated;
  await page.waitForLoadState();
}

/** The login page's button of `provider`: the browser goes to the vendor (and, where its stand-in asks nothing, straight back). */
async function clickProvider(page: Page, provider: string) {
  await page.goto(`${t.url}/ui/login`);
  const button = page.locator(`button.idp:has-text("${provider}")`);
  expect(await button.count(), `the login page's provider buttons: ${JSON.stringify(await page.locator("button.idp").allTextContents())}`).toBe(1);
  await nextPage(page, () => button.click());
}

const textOf = async (page: Page) => {
  await afterCallback(page);
  return (await page.textContent("body")) ?? "";
};

/** oidc-provider's pages: its development login (any password), then its consent on a browser's first sign-in there. */
async function atOp(page: Page, login: string) {
  await page.fill("input[name=login]", login);
  await page.fill("input[name=password]", "anything");
  await page.click("button[type=submit]");
  const consent = page.locator("input[name=prompt][value=consent]");
  await Promise.race([page.waitForURL((u) => u.href.startsWith(t.url)), consent.waitFor({ state: "attached" })]);
  if (await consent.count()) await page.click("button[type=submit]");
  await page.waitForURL((u) => u.href.startsWith(t.url));
}

/** The authorization requests the page sent to `origin`'s `path`, as query parameters. */
function authorizationsAt(page: Page, origin: string, path: string) {
  const seen: Record<string, string>[] = [];
  page.on("request", (r) => {
    const u = new URL(r.url());
    if (u.origin === origin && u.pathname === path) seen.push(Object.fromEntries(u.searchParams));
  });
  return seen;
}

const scopesOf = (scope: string | undefined) => (scope ?? "").split(/[\s,]+/).filter(Boolean);

beforeAll(async () => {
  // The server's port first: oidc-provider (Google's and GitLab's stand-in) knows its client's redirect URI from the start.
  const port = await reservePort();
  const redirectUri = `http://127.0.0.1:${port}/idps/callback`;
  gh = await startGitHubStandIn({ users: [OCTO, HUBOT, MONA] });
  az = await startAzureStandIn({ users: [ADELE, BERT] });
  apple = await startAppleStandIn({ publicKeyOfClient: appleKeys.publicKey, client: appleClient });
  google = await startExternalOp(redirectUri);
  gitlab = await startExternalOp(redirectUri);
  const overrides = {
    "https://github.com": gh.origin,
    "https://api.github.com": gh.origin,
    "https://login.microsoftonline.com": az.origin,
    "https://graph.microsoft.com": az.origin,
    "https://accounts.google.com": google.issuer,
    "https://gitlab.com": gitlab.issuer,
    "https://appleid.apple.com": apple.origin,
  };
  t = await startTestServer(
    {
      SVC_PORT: String(port),
      SVC_IDP_ENDPOINT_OVERRIDES: Object.entries(overrides)
        .map(([from, to]) => `${from}=${to}`)
        .join(","),
      SVC_LOG_LEVEL: "warn",
    },
    { logger: true, logStream: { write: (line) => void logs.push(line) } },
  );
  expect(t.url).toBe(`http://127.0.0.1:${port}`);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  for (const s of [gh, az, apple, google, gitlab]) await s?.close();
  await t?.close();
});

describe("sign-in through the vendor kinds, against stand-ins of the vendors", () => {
  it("GitHub: default scopes, a JSON token answer, the numeric ID and login, the primary address of the e-mails API as verified", async () => {
    const id = await createProvider("github", "GitHub.com", { client_id: gh.clientId, client_secret: gh.clientSecret });
    try {
      await expectSecretHidden("github", id, "hasClientSecret", [gh.clientSecret]);
      gh.signedIn = "octo";
      const { page } = await newPage(browser);
      const why = watch(page);
      await clickProvider(page, "GitHub.com");
      expect(await textOf(page), why()).toContain("octo");

      const authorization = gh.authorizations.at(-1)!.params;
      expect(authorization).toMatchObject({ client_id: gh.clientId, redirect_uri: callback() });
      expect(authorization.state?.length, "state").toBeGreaterThanOrEqual(16);
      expect(scopesOf(authorization.scope).sort()).toEqual(["read:user", "user:email"]);
      const tokenRequest = gh.tokenRequests.at(-1)!;
      expect(tokenRequest.outcome).toBe("ok");
      expect(tokenRequest.headers.accept).toContain("application/json");
      if (tokenRequest.params.redirect_uri) expect(tokenRequest.params.redirect_uri).toBe(callback());
      expect(gh.apiRequests.filter((r) => r.status === 200).map((r) => r.path)).toEqual(expect.arrayContaining(["/user", "/user/emails"]));

      const { user, links } = await accountOf(id, why);
      expect(user).toMatchObject({ loginName: "octo", email: "octo@users.example", emailVerified: true });
      expect(links).toMatchObject([{ externalUserId: "12345" }]);
      await page.context().close();
    } finally {
      await deactivate("github", id);
    }
  });

  it("GitHub: a primary address GitHub has not verified is taken as unverified (a verified other one is not taken); configured scopes are asked", async () => {
    const scopes = ["read:user", "user:email", "read:org"];
    const id = await createProvider("github", "GitHub Unverified", { client_id: gh.clientId, client_secret: gh.clientSecret, scopes });
    try {
      gh.signedIn = "hubot";
      const { page } = await newPage(browser);
      const why = watch(page);
      await clickProvider(page, "GitHub Unverified");
      expect(await textOf(page), why()).toContain("hubot");
      expect(scopesOf(gh.authorizations.at(-1)!.params.scope).sort()).toEqual([...scopes].sort());
      const { user, links } = await accountOf(id, why);
      expect(user).toMatchObject({ loginName: "hubot", email: "hubot@users.example", emailVerified: false });
      expect(links).toMatchObject([{ externalUserId: "67890" }]);
      await page.context().close();
    } finally {
      await deactivate("github", id);
    }
  });

  it("GitHub Enterprise: its configured endpoints, the e-mails API next to its user endpoint", async () => {
    const id = await createProvider("github_enterprise", "Mona Enterprise", {
      client_id: gh.clientId,
      client_secret: gh.clientSecret,
      authorization_endpoint: `${gh.origin}/login/oauth/authorize`,
      token_endpoint: `${gh.origin}/login/oauth/access_token`,
      user_endpoint: `${gh.origin}/api/v3/user`,
    });
    try {
      await expectSecretHidden("github_enterprise", id, "hasClientSecret", [gh.clientSecret]);
      gh.signedIn = "mona";
      const fromApi = gh.apiRequests.length;
      const { page } = await newPage(browser);
      const why = watch(page);
      await clickProvider(page, "Mona Enterprise");
      expect(await textOf(page), why()).toContain("mona");
      expect(gh.authorizations.at(-1)!.params).toMatchObject({ client_id: gh.clientId, redirect_uri: callback() });
      expect(gh.tokenRequests.at(-1)!).toMatchObject({ outcome: "ok", headers: { accept: expect.stringContaining("application/json") } });
      expect(gh.apiRequests.slice(fromApi).map((r) => `${r.path} ${r.status}`)).toEqual(
        expect.arrayContaining(["/api/v3/user 200", "/api/v3/user/emails 200"]),
      );
      const { user, links } = await accountOf(id, why);
      expect(user).toMatchObject({ loginName: "mona", email: "mona@ghe.example", emailVerified: true });
      expect(links).toMatchObject([{ externalUserId: "424242" }]);
      await page.context().close();
    } finally {
      await deactivate("github_enterprise", id);
    }
  });

  it("GitLab: OpenID Connect at gitlab.com's issuer, default scopes, PKCE (S256)", async () => {
    const id = await createProvider("gitlab", "GitLab.com", { client_id: gitlab.clientId, client_secret: gitlab.clientSecret });
    try {
      await expectSecretHidden("gitlab", id, "hasClientSecret", [gitlab.clientSecret]);
      const { page } = await newPage(browser);
      const why = watch(page);
      const asked = authorizationsAt(page, gitlab.issuer, "/auth");
      await clickProvider(page, "GitLab.com");
      expect(page.url(), why()).toMatch(new RegExp(`^${gitlab.issuer}/`));
      await atOp(page, "gitte");
      expect(await textOf(page), why()).toContain("gitte");
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatchObject({ client_id: gitlab.clientId, redirect_uri: callback(), response_type: "code", code_challenge_method: "S256" });
      expect(asked[0]!.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(asked[0]!.state?.length, "state").toBeGreaterThanOrEqual(16);
      expect(scopesOf(asked[0]!.scope)).toEqual(expect.arrayContaining(["openid", "profile", "email"]));
      const { user, links } = await accountOf(id, why);
      expect(user).toMatchObject({ email: "gitte@ext.example.com", emailVerified: true, givenName: "Gitte", familyName: "External" });
      expect(links).toMatchObject([{ externalUserId: "gitte" }]);
      await page.context().close();
    } finally {
      await deactivate("gitlab", id);
    }
  });

  it("Google: OpenID Connect at accounts.google.com's issuer, default scopes, the e-mail address as the username", async () => {
    const id = await createProvider("google", "Google", { client_id: google.clientId, client_secret: google.clientSecret });
    try {
      await expectSecretHidden("google", id, "hasClientSecret", [google.clientSecret]);
      const { page } = await newPage(browser);
      const why = watch(page);
      const asked = authorizationsAt(page, google.issuer, "/auth");
      await clickProvider(page, "Google");
      expect(page.url(), why()).toMatch(new RegExp(`^${google.issuer}/`));
      await atOp(page, "gina");
      expect(await textOf(page), why()).toContain("gina@ext.example.com");
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatchObject({ client_id: google.clientId, redirect_uri: callback(), response_type: "code" });
      expect(asked[0]!.state?.length, "state").toBeGreaterThanOrEqual(16);
      expect(scopesOf(asked[0]!.scope)).toEqual(expect.arrayContaining(["openid", "profile", "email"]));
      const { user, links } = await accountOf(id, why);
      expect(user).toMatchObject({ loginName: "gina@ext.example.com", email: "gina@ext.example.com", emailVerified: true, givenName: "Gina" });
      expect(links).toMatchObject([{ externalUserId: "gina" }]);
      await page.context().close();
    } finally {
      await deactivate("google", id);
    }
  });

  it("Azure AD: the tenant's endpoints, openid profile email User.Read, Graph's /me; email_verified vouches only for one tenant's mail", async () => {
    const contoso = await createProvider("azure_ad", "Azure Contoso", {
      client_id: az.clientId,
      client_secret: az.clientSecret,
      tenant: { tenant_id: "contoso" },
      email_verified: true,
    });
    // Multi-tenant: any tenant's administrator sets `mail`, so email_verified vouches for nothing ("nOAuth").
    const organisations = await createProvider("azure_ad", "Azure Organisations", {
      client_id: az.clientId,
      client_secret: az.clientSecret,
      tenant: { tenant_type: "AZURE_AD_TENANT_TYPE_ORGANISATIONS" },
      email_verified: true,
      scopes: ["Calendars.Read"],
    });
    try {
      await expectSecretHidden("azure_ad", contoso, "hasClientSecret", [az.clientSecret]);

      // a tenant by ID, addresses vouched for: bert's `mail` is his address (verified), his userPrincipalName his username
      az.signedIn = BERT.userPrincipalName;
      const { page } = await newPage(browser);
      const why = watch(page);
      await clickProvider(page, "Azure Contoso");
      expect(await textOf(page), why()).toContain("bert@contoso.onmicrosoft.example");
      const first = az.authorizations.at(-1)!;
      expect(first.tenant).toBe("contoso");
      expect(first.params).toMatchObject({ client_id: az.clientId, redirect_uri: callback(), response_type: "code" });
      expect(first.params.state?.length, "state").toBeGreaterThanOrEqual(16);
      expect(scopesOf(first.params.scope)).toEqual(expect.arrayContaining(["openid", "profile", "email", "User.Read"]));
      expect(az.tokenRequests.at(-1)).toMatchObject({ tenant: "contoso", outcome: "ok" });
      expect(az.graphRequests.at(-1)).toMatchObject({ path: "/v1.0/me", status: 200 });
      const bert = await accountOf(contoso, why);
      expect(bert.user).toMatchObject({
        loginName: "bert@contoso.onmicrosoft.example",
        email: "bert@contoso.example",
        emailVerified: true,
        givenName: "Bert",
        familyName: "Bauer",
      });
      expect(bert.links).toMatchObject([{ externalUserId: "aad-2" }]);
      await page.context().close();

      // the organisations tenant: not vouched for although email_verified is on; adele has no `mail`, her
      // userPrincipalName stands in for the address (never verified)
      az.signedIn = ADELE.userPrincipalName;
      const { page: other } = await newPage(browser);
      const why2 = watch(other);
      await clickProvider(other, "Azure Organisations");
      expect(await textOf(other), why2()).toContain("adele@contoso.example");
      const second = az.authorizations.at(-1)!;
      expect(second.tenant).toBe("organizations");
      expect(scopesOf(second.params.scope)).toEqual(expect.arrayContaining(["openid", "profile", "email", "User.Read", "Calendars.Read"]));
      expect(az.tokenRequests.at(-1)).toMatchObject({ tenant: "organizations", outcome: "ok" });
      const adele = await accountOf(organisations, why2);
      expect(adele.user).toMatchObject({
        loginName: "adele@contoso.example",
        email: "adele@contoso.example",
        emailVerified: false,
        givenName: "Adele",
        familyName: "Vance",
        displayName: "Adele Vance",
      });
      expect(adele.links).toMatchObject([{ externalUserId: "aad-1" }]);
      await other.context().close();
    } finally {
      await deactivate("azure_ad", contoso);
      await deactivate("azure_ad", organisations);
    }
  });

  it("Apple: discovery, form_post from another site, an ES256 client secret of the client's key, the name of the posted `user`", async () => {
    const id = await createProvider("apple", "Apple", {
      client_id: appleClient.clientId,
      team_id: appleClient.teamId,
      key_id: appleClient.keyId,
      private_key: applePrivateKey,
    });
    try {
      const keyBody = applePrivateKey
        .replace(/-----[A-Z ]+-----/g, "")
        .replace(/\s+/g, "")
        .slice(0, 40);
      await expectSecretHidden("apple", id, "hasPrivateKey", [applePrivateKey, keyBody]);
      const { page } = await newPage(browser);
      const why = watch(page);
      await clickProvider(page, "Apple");
      expect(page.url(), why()).toMatch(new RegExp(`^${apple.origin}/auth/authorize`));
      const authorization = apple.authorizations.at(-1)!.params;
      expect(authorization).toMatchObject({ client_id: appleClient.clientId, redirect_uri: callback(), response_type: "code", response_mode: "form_post" });
      expect.soft(scopesOf(authorization.scope).sort(), "Apple's default scopes").toEqual(["email", "name"]);
      expect(authorization.state?.length, "state").toBeGreaterThanOrEqual(16);
      expect(authorization.nonce?.length, "nonce").toBeGreaterThanOrEqual(16);

      // Apple's page posts the answer to the server (a cross-site POST from http://localhost)
      const posted = page.waitForRequest((r) => r.url().startsWith(callback()) && r.method() === "POST");
      await nextPage(page, () => page.click("#apple-continue"));
      expect((await posted).headers().origin).toBe(apple.origin);
      expect(await textOf(page), why()).not.toMatch(/did not succeed/i);

      const tokenRequest = apple.tokenRequests.at(-1);
      expect(tokenRequest, why()).toBeDefined();
      expect(tokenRequest!.secret, why()).toMatchObject({ verified: true, header: { alg: "ES256", kid: appleClient.keyId } });
      expect(tokenRequest!.secret.claims).toMatchObject({ iss: appleClient.teamId, sub: appleClient.clientId, aud: APPLE_AUDIENCE });
      expect(tokenRequest!).toMatchObject({ outcome: "ok", client: { method: "post", id: appleClient.clientId } });
      expect(tokenRequest!.params.redirect_uri ?? callback()).toBe(callback());

      const { user, links } = await accountOf(id, why);
      expect(user).toMatchObject({ email: "hidden@privaterelay.appleid.com", emailVerified: true, givenName: "Appy", familyName: "Seed" });
      expect(links).toMatchObject([{ externalUserId: "apple-001" }]);
      await page.context().close();
    } finally {
      await deactivate("apple", id);
    }
  });
});
