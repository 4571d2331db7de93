import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/browser.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { MovableClock } from "../support/clock.js";
import { newPage, signInOnPage, startCodeFlow, startRedirectCatcher, webApp } from "../oidc/rp.js";
import { totpCode } from "../support/totp.js";

let t: TestServer;
/** The server's time: the skip lifetime of the MFA set-up is decided by it. */
const clock = new MovableClock();
let browser: Browser;
let rp: Awaited<ReturnType<typeof startRedirectCatcher>>;
let web: Awaited<ReturnType<typeof webApp>>;
const PASSWORD = "Secr3t!pass";

const patch = (body: object, query = "") => rest(t.url, "PATCH", `/settings/v3alpha/login${query}`, { token: t.adminPat, body });
const read = (query = "") => rest(t.url, "GET", `/settings/v3alpha/login${query}`, { token: t.adminPat });

beforeAll(async () => {
  t = await startTestServer({}, { clock });
  browser = await launchChromium();
  rp = await startRedirectCatcher();
  web = await webApp(t, rp);
});
afterAll(async () => {
  await browser?.close();
  await rp?.close();
  await t?.close();
});

async function humanIn(orgId: string, username: string): Promise<string> {
  const r = await rest(t.url, "POST", `/resources/v3alpha/users?ctx.org_id=${orgId}`, {
    token: t.adminPat,
    body: {
      username,
      human: {
        profile: { givenName: "M", familyName: "F" },
        email: { address: `${username}@example.com`, isVerified: true },
        password: { password: PASSWORD },
      },
    },
  });
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
  return r.body.details.id as string;
}

/** Starts the code flow and signs in with the password; `finish` redeems the code where the page landed. */
async function signIn(page: Page, username: string) {
  const finish = await startCodeFlow(page, { issuer: t.url, app: web, redirectTo: rp });
  await signInOnPage(page, username, PASSWORD);
  return async () => [...((await finish()).claims.amr as string[])].sort();
}

describe("login settings for second factors", () => {
  it("have built-in values owned by the system, are inherited and overridden per organisation, and refuse unknown factors", async () => {
    const s = (await read()).body.settings;
    expect(s.secondFactors).toEqual({ value: ["otp"], owner: { type: "OWNER_TYPE_SYSTEM", id: "" } });
    expect(s.forceMfa).toMatchObject({ value: false, owner: { type: "OWNER_TYPE_SYSTEM" } });
    expect(s.forceMfaLocalOnly).toMatchObject({ value: false });
    expect(s.mfaInitSkipLifetime).toMatchObject({ value: "0s" });
    const org = await t.org("Inherit MFA");
    expect((await patch({ mfaInitSkipLifetime: { set: "3600s" } })).status).toBe(200);
    expect((await patch({ forceMfa: { set: true } }, `?ctx.org_id=${org}`)).status).toBe(200);
    const inOrg = (await read(`?ctx.org_id=${org}`)).body.settings;
    expect(inOrg.forceMfa).toEqual({ value: true });
    expect(inOrg.mfaInitSkipLifetime).toEqual({ value: "3600s", owner: { type: "OWNER_TYPE_INSTANCE", id: t.instanceId } });
    expect((await patch({ mfaInitSkipLifetime: { reset: true } })).status).toBe(200);
    const bad = await patch({ secondFactors: { set: { value: ["otp", "carrier-pigeon"] } } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("carrier-pigeon");
  });

  it("force MFA: a user of the organisation without a second factor sets one up before the sign-in completes (no skip); others are not asked", async () => {
    const forced = await t.org("Forced MFA");
    expect((await patch({ forceMfa: { set: true } }, `?ctx.org_id=${forced}`)).status).toBe(200);
    await humanIn(forced, "fiona");
    await humanIn(t.defaultOrgId, "frank");

    const { page, ctx } = await newPage(browser);
    const finish = await signIn(page, "fiona");
    expect(await page.textContent("h1")).toBe("Set up an authenticator app");
    expect(await page.locator("text=Skip for now").count()).toBe(0);
    // Not signed in yet: a forged skip is refused.
    const secret = (await page.textContent("#otp-secret"))!.trim();
    await page.fill("#code", totpCode(secret));
    await page.click("button[type=submit]");
    expect(await finish()).toEqual(["mfa", "otp", "pwd"]);
    await ctx.close();

    // The next sign-in asks for the code, not a set-up.
    const again = await newPage(browser);
    const finishAgain = await signIn(again.page, "fiona");
    expect(await again.page.textContent("h1")).toBe("Authenticator code");
    await again.page.fill("#code", totpCode(secret));
    await again.page.click("button[type=submit]");
    expect(await finishAgain()).toEqual(["mfa", "otp", "pwd"]);
    await again.ctx.close();

    // The default organisation does not force it: the password alone.
    const other = await newPage(browser);
    expect(await (await signIn(other.page, "frank"))()).toEqual(["pwd"]);
    await other.ctx.close();
  });

  it("force MFA for local users only forces it for password sign-ins", async () => {
    const local = await t.org("Local MFA");
    expect((await patch({ forceMfaLocalOnly: { set: true } }, `?ctx.org_id=${local}`)).status).toBe(200);
    await humanIn(local, "lara");
    const { page, ctx } = await newPage(browser);
    await signIn(page, "lara");
    expect(await page.textContent("h1")).toBe("Set up an authenticator app");
    expect(await page.locator("text=Skip for now").count()).toBe(0);
    await ctx.close();
  });

  it("MFA set-up may be skipped for the skip lifetime when not forced", async () => {
    const lax = await t.org("Skip MFA");
    expect((await patch({ mfaInitSkipLifetime: { set: "3600s" } }, `?ctx.org_id=${lax}`)).status).toBe(200);
    await humanIn(lax, "sam");
    const { page, ctx } = await newPage(browser);
    const finish = await signIn(page, "sam");
    expect(page.url()).toContain("/ui/login/password");
    expect(await page.textContent("h1")).toBe("Set up an authenticator app");
    await page.click("text=Skip for now");
    expect(await finish()).toEqual(["pwd"]);
    await ctx.close();
    // Within the lifetime: not asked again.
    const again = await newPage(browser);
    expect(await (await signIn(again.page, "sam"))()).toEqual(["pwd"]);
    await again.ctx.close();
    // A lifetime shorter than the time since the skip: asked again. A minute, which the sign-ins above cannot
    // take in real time, passed on the server's clock.
    expect((await patch({ mfaInitSkipLifetime: { set: "60s" } }, `?ctx.org_id=${lax}`)).status).toBe(200);
    const withinMinute = await newPage(browser);
    expect(await (await signIn(withinMinute.page, "sam"))()).toEqual(["pwd"]);
    await withinMinute.ctx.close();
    clock.advance(61_000);
    const third = await newPage(browser);
    await signIn(third.page, "sam");
    expect(await third.page.textContent("h1")).toBe("Set up an authenticator app");
    await third.ctx.close();
  });
});
