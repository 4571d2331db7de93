import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { addHuman, webApp } from "../oidc/rp.js";

// An authorization request naming an organisation (urn:svc:iam:org:id:… / urn:svc:iam:org:domain:primary:…): the
// login UI shows that organisation's texts and branding, only its users sign in, and tokens carry its claims.
let t: TestServer;
let org: string;
let orgDomain: string;
let app: { clientId: string; clientSecret: string };
const PASSWORD = "Secr3t!pass";
const REDIRECT = "https://rp.example.com/cb";
const admin = (method: string, path: string, body?: unknown) => rest(t.url, method, path, { token: t.adminPat, ...(body ? { body } : {}) });

beforeAll(async () => {
  t = await startTestServer();
  org = await t.org("Branded Org");
  orgDomain = (await admin("GET", `/resources/v3alpha/organizations/${org}`)).body.organization.primaryDomain;
  const member = await admin("POST", `/resources/v3alpha/users?ctx.org_id=${org}`, {
    username: "branded-member",
    human: { profile: { givenName: "B", familyName: "M" }, email: { address: "member@branded.example", isVerified: true }, password: { password: PASSWORD } },
  });
  expect(member.status, JSON.stringify(member.body)).toBe(201);
  await addHuman(t, "outsider", PASSWORD);
  app = await webApp(t, { origin: "https://rp.example.com" }, "org-scoped");
  // The organisation's own title and colours; the instance keeps the built-in ones.
  expect((await admin("PATCH", `/settings/v3alpha/texts/en?ctx.org_id=${org}`, { "login.title": { set: "Sign in to Branded" } })).status).toBe(200);
  expect((await admin("PATCH", `/settings/v3alpha/branding?ctx.org_id=${org}`, { primaryColor: { set: "#123456" } })).status).toBe(200);
  expect((await admin("POST", `/settings/v3alpha/branding/_activate?ctx.org_id=${org}`, {})).status).toBe(200);
});
afterAll(() => t?.close());

/** Starts a code flow with `scope`; the login page's HTML, its cookies and the form's hidden fields. */
async function loginPage(scope: string) {
  const params = new URLSearchParams({ client_id: app.clientId, redirect_uri: REDIRECT, response_type: "code", scope });
  const start = await rest(t.url, "GET", `/oauth/v2/authorize?${params}`);
  expect(start.status, String(start.body)).toBe(303);
  const page = await rest(t.url, "GET", start.headers.location!);
  const html = page.body as string;
  return {
    html,
    cookie: String(page.headers["set-cookie"]).split(";")[0]!,
    csrf: html.match(/name="csrf" value="([^"]+)"/)![1]!,
    returnTo: html.match(/name="return_to" value="([^"]+)"/)![1]!.replace(/&amp;/g, "&"),
  };
}

async function signIn(scope: string, loginName: string) {
  const p = await loginPage(scope);
  return rest(t.url, "POST", "/ui/login/password", {
    body: new URLSearchParams({ loginName, password: PASSWORD, csrf: p.csrf, return_to: p.returnTo }).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: p.cookie },
  });
}

describe("authorization requests for one organisation", () => {
  it("show the organisation's texts and branding; without the scope, the instance's", async () => {
    const scoped = await loginPage(`openid urn:svc:iam:org:id:${org}`);
    expect(scoped.html).toContain("Sign in to Branded");
    const css = scoped.html.match(/href="(\/ui\/login\/branding\.css\?org=[^"]+)"/)![1]!;
    expect((await rest(t.url, "GET", css.replace(/&amp;/g, "&"))).body).toContain("#123456");
    // By its primary domain too.
    expect((await loginPage(`openid urn:svc:iam:org:domain:primary:${orgDomain}`)).html).toContain("Sign in to Branded");

    const plain = await loginPage("openid");
    expect(plain.html).not.toContain("Sign in to Branded");
    expect(plain.html).toContain('href="/ui/login/branding.css"');
    expect((await rest(t.url, "GET", "/ui/login/branding.css")).body).not.toContain("#123456");
    // Another instance's or an unknown organisation in ?org= is the instance's branding.
    expect((await rest(t.url, "GET", "/ui/login/branding.css?org=nope")).body).not.toContain("#123456");
  });

  it("let only the organisation's users sign in; their tokens carry its claims", async () => {
    const refused = await signIn(`openid urn:svc:iam:org:id:${org}`, "outsider");
    expect(refused.status).toBe(403);
    expect(refused.body).toContain("does not belong to the organisation");

    const signedIn = await signIn(`openid urn:svc:iam:org:id:${org}`, "branded-member");
    expect(signedIn.status).toBe(303);
    const agent = String(signedIn.headers["set-cookie"]).split(";")[0]!;
    const back = await rest(t.url, "GET", signedIn.headers.location!, { headers: { cookie: agent } });
    const code = new URL(back.headers.location!).searchParams.get("code")!;
    expect(code).toBeTruthy();
    const tokens = await fetch(`${t.url}/oauth/v2/token`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${Buffer.from(`${app.clientId}:${app.clientSecret}`).toString("base64")}`,
      },
      body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT }),
    });
    const { access_token, scope } = (await tokens.json()) as { access_token: string; scope: string };
    expect(scope).toContain(`urn:svc:iam:org:id:${org}`);
    const userinfo = (await (await fetch(`${t.url}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${access_token}` } })).json()) as Record<
      string,
      unknown
    >;
    expect(userinfo["urn:svc:iam:org:id"]).toBe(org);
    expect(userinfo["urn:svc:iam:org:domain:primary"]).toBe(orgDomain);
  });

  it("an unknown organisation lets nobody in; a browser already signed in elsewhere gets access_denied at the callback", async () => {
    expect((await signIn("openid urn:svc:iam:org:id:no-such-org", "outsider")).status).toBe(403);

    // The outsider signs in for an unscoped request; the browser's session then meets a scoped request directly.
    const plain = await signIn("openid", "outsider");
    expect(plain.status).toBe(303);
    const agent = String(plain.headers["set-cookie"]).split(";")[0]!;
    const session = new URL(plain.headers.location!, t.url).searchParams.get("session")!;
    const scoped = await loginPage(`openid urn:svc:iam:org:id:${org}`);
    const callback = await rest(t.url, "GET", `${scoped.returnTo}&session=${encodeURIComponent(session)}`, { headers: { cookie: agent } });
    const answer = new URL(callback.headers.location!);
    expect(answer.searchParams.get("error")).toBe("access_denied");
    expect(answer.searchParams.get("code")).toBeNull();
  });
});
