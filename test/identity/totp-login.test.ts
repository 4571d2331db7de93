import type { Browser, Page } from "playwright-core";
import QRCode from "qrcode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/browser.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { MovableClock } from "../support/clock.js";
import { addHuman, newPage, signInOnPage, startCodeFlow, startRedirectCatcher, webApp } from "../oidc/rp.js";
import { totpCode, unusedTotpCode, wrongTotpCode } from "../support/totp.js";

let t: TestServer;
/** The server's time: max_age is decided by it. */
const clock = new MovableClock();
let browser: Browser;
let rp: Awaited<ReturnType<typeof startRedirectCatcher>>;
let web: Awaited<ReturnType<typeof webApp>>;
const PASSWORD = "Secr3t!pass";

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

/** Starts the code flow of the web application in the page; returns what finishes it. */
const startFlow = (page: Page, extra: Record<string, string> = {}) => startCodeFlow(page, { issuer: t.url, app: web, redirectTo: rp, extra });

/** Enrols a TOTP authenticator from the signed-in page; the secret as the page shows it. */
async function enrol(page: Page): Promise<string> {
  await page.click("text=Set up an authenticator app");
  const secret = (await page.textContent("#otp-secret"))!.trim();
  expect(secret).toMatch(/^[A-Z2-7]{32}$/);
  // The QR code is the otpauth:// URI of this secret: the page's SVG is the one the URI encodes.
  const uri = (await page.getAttribute(".qr", "data-otpauth"))!;
  const parsed = new URL(uri);
  expect(parsed.protocol).toBe("otpauth:");
  expect(parsed.searchParams.get("secret")).toBe(secret);
  const modules = await page.getAttribute(".qr svg path[stroke]", "d");
  const expected = (await QRCode.toString(uri, { type: "svg", errorCorrectionLevel: "M", margin: 2 })).match(/stroke="[^"]+" d="([^"]+)"/)![1];
  expect(modules).toBe(expected);
  return secret;
}

describe("TOTP through the login UI", () => {
  it("enrols with the QR code's secret, then every sign-in asks for a code; amr says pwd, otp, mfa", async () => {
    const userId = await addHuman(t, "tina", PASSWORD);
    const { page, ctx } = await newPage(browser);

    // Without a second factor: the password alone, amr pwd.
    let finish = await startFlow(page);
    await signInOnPage(page, "tina", PASSWORD);
    let { claims } = await finish();
    expect(claims.sub).toBe(userId);
    expect(claims.amr).toEqual(["pwd"]);

    // Enrolment from the signed-in page: a wrong code is refused and a new secret shown; the right one confirms.
    await page.goto(`${t.url}/ui/login`);
    let secret = await enrol(page);
    await page.fill("#code", wrongTotpCode(secret));
    await page.click("button[type=submit]");
    expect(await page.textContent(".error")).toContain("not valid");
    const second = (await page.textContent("#otp-secret"))!.trim();
    expect(second).not.toBe(secret);
    secret = second;
    await page.fill("#code", totpCode(secret));
    await page.click("button[type=submit]");
    expect(await page.textContent("main")).toContain("The authenticator app is set up");
    await ctx.close();

    // A new browser: password, then the code page; a wrong code stays there, the right one signs in. Each
    // sign-in needs a code not used before (an accepted code is used up).
    const used = new Set<number>();
    const fresh = await newPage(browser);
    finish = await startFlow(fresh.page);
    await signInOnPage(fresh.page, "tina", PASSWORD);
    expect(await fresh.page.textContent("h1")).toBe("Authenticator code");
    await fresh.page.fill("#code", "12345");
    await fresh.page.click("button[type=submit]");
    expect(await fresh.page.textContent(".error")).toContain("not valid");
    await fresh.page.fill("#code", await unusedTotpCode(secret, used));
    await fresh.page.click("button[type=submit]");
    const result = await finish();
    expect(result.claims.sub).toBe(userId);
    expect([...(result.claims.amr as string[])].sort()).toEqual(["mfa", "otp", "pwd"]);
    expect([...(result.introspection.amr as string[])].sort()).toEqual(["mfa", "otp", "pwd"]);

    // prompt=login asks for both factors again, not only the password.
    finish = await startFlow(fresh.page, { prompt: "login" });
    await signInOnPage(fresh.page, "tina", PASSWORD);
    expect(await fresh.page.textContent("h1")).toBe("Authenticator code");
    await fresh.page.fill("#code", await unusedTotpCode(secret, used));
    await fresh.page.click("button[type=submit]");
    ({ claims } = await finish());
    expect([...(claims.amr as string[])].sort()).toEqual(["mfa", "otp", "pwd"]);

    // So does a max_age the session's sign-in is older than.
    clock.advance(1100);
    finish = await startFlow(fresh.page, { max_age: "1" });
    await signInOnPage(fresh.page, "tina", PASSWORD);
    expect(await fresh.page.textContent("h1")).toBe("Authenticator code");
    await fresh.page.fill("#code", await unusedTotpCode(secret, used));
    await fresh.page.click("button[type=submit]");
    ({ claims } = await finish());
    expect([...(claims.amr as string[])].sort()).toEqual(["mfa", "otp", "pwd"]);
    await fresh.ctx.close();
  });

  it("a pending code step cannot be skipped: the code page's token does not sign in without a valid code", async () => {
    await addHuman(t, "tom", PASSWORD);
    const { page, ctx } = await newPage(browser);
    await page.goto(`${t.url}/ui/login`);
    await signInOnPage(page, "tom", PASSWORD);
    const secret = await enrol(page);
    await page.fill("#code", totpCode(secret));
    await page.click("button[type=submit]");
    await ctx.close();

    const other = await newPage(browser);
    await other.page.goto(`${t.url}/ui/login`);
    await signInOnPage(other.page, "tom", PASSWORD);
    expect(await other.page.textContent("h1")).toBe("Authenticator code");
    // No session yet: the login page still asks for a login name, not "signed in".
    await other.page.goto(`${t.url}/ui/login`);
    expect(await other.page.locator("#loginName").count()).toBe(1);
    await other.ctx.close();
  });
});
