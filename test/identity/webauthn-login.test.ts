import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/browser.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { MovableClock } from "../support/clock.js";
import { addHuman, newPage, signInOnPage, startCodeFlow, startRedirectCatcher, webApp } from "../oidc/rp.js";

let t: TestServer;
/** The server's time: max_age is decided by it. */
const clock = new MovableClock();
let browser: Browser;
let rp: Awaited<ReturnType<typeof startRedirectCatcher>>;
let web: Awaited<ReturnType<typeof webApp>>;
const PASSWORD = "Secr3t!pass";

/** WebAuthn needs a domain as RP ID, not an IP address: the instance's "localhost" domain. */
const base = () => t.url.replace("127.0.0.1", "localhost");
const patchLogin = (body: object) => rest(t.url, "PATCH", "/settings/v3alpha/login", { token: t.adminPat, body });

beforeAll(async () => {
  t = await startTestServer({}, { clock });
  browser = await launchChromium();
  rp = await startRedirectCatcher();
  web = await webApp(t, rp);
  expect((await patchLogin({ secondFactors: { set: { value: ["otp", "u2f"] } } })).status).toBe(200);
});
afterAll(async () => {
  await browser?.close();
  await rp?.close();
  await t?.close();
});

/** A page with scripts on and Chromium's virtual authenticator (CTAP2, resident keys, user verification). */
async function pageWithAuthenticator() {
  const { page, ctx } = await newPage(browser, true);
  const cdp = await ctx.newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "usb",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { page, ctx };
}

/** Starts the code flow of the web application in the page; returns what finishes it. */
const startFlow = (page: Page, extra: Record<string, string> = {}) => startCodeFlow(page, { issuer: base(), app: web, redirectTo: rp, extra });

/** Runs the page's WebAuthn ceremony (the button hands the options to navigator.credentials, then posts). */
async function ceremony(page: Page) {
  const before = page.url();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => errors.push(m.text()));
  await page.click("#webauthn-start");
  await page
    .waitForFunction((u) => location.href !== u || !document.getElementById("webauthn-error")?.hidden, before, { timeout: 10_000 })
    .catch(() => undefined);
  const shown = await page.locator("#webauthn-error:not([hidden])").count();
  if (shown) throw new Error(`the ceremony failed: ${await page.textContent("#webauthn-error")} ${errors.join("; ")}`);
  await page.waitForLoadState();
}

const sorted = (v: unknown) => [...(v as string[])].sort();

describe("WebAuthn through the login UI", () => {
  it("a security key registered after sign-in is the second factor of the next sign-in: amr pwd hwk mfa, acr mfa", async () => {
    const userId = await addHuman(t, "keya", PASSWORD);
    const { page, ctx } = await pageWithAuthenticator();
    // The password alone: acr pwd.
    const first = await startFlow(page);
    await signInOnPage(page, "keya", PASSWORD);
    const alone = await first();
    expect(alone.claims.amr).toEqual(["pwd"]);
    expect(alone.claims.acr).toBe("urn:svc:acr:pwd");
    expect(alone.introspection.acr).toBe("urn:svc:acr:pwd");
    await page.goto(`${base()}/ui/login`);
    await page.click("text=Add a security key");
    expect(await page.textContent("h1")).toBe("Add a security key");
    await ceremony(page);
    expect(await page.textContent("main")).toContain("is registered");

    const finish = await startFlow(page, { prompt: "login" });
    await signInOnPage(page, "keya", PASSWORD);
    expect(await page.textContent("h1")).toBe("Security key");
    await ceremony(page);
    const { claims, introspection } = await finish();
    expect(claims.sub).toBe(userId);
    expect(sorted(claims.amr)).toEqual(["hwk", "mfa", "pwd"]);
    expect(claims.acr).toBe("urn:svc:acr:mfa");
    expect(sorted(introspection.amr)).toEqual(["hwk", "mfa", "pwd"]);
    expect(introspection.acr).toBe("urn:svc:acr:mfa");

    // A max_age the session's sign-in is older than asks for both factors again too.
    clock.advance(1100);
    const again = await startFlow(page, { max_age: "1" });
    await signInOnPage(page, "keya", PASSWORD);
    expect(await page.textContent("h1")).toBe("Security key");
    await ceremony(page);
    expect(sorted((await again()).claims.amr)).toEqual(["hwk", "mfa", "pwd"]);
    await ctx.close();
  });

  it("forced MFA with security keys as the only factor: a key is registered before the sign-in completes", async () => {
    const orgId = await t.org("Keys only");
    const patched = await rest(t.url, "PATCH", `/settings/v3alpha/login?ctx.org_id=${orgId}`, {
      token: t.adminPat,
      body: { forceMfa: { set: true }, secondFactors: { set: { value: ["u2f"] } } },
    });
    expect(patched.status).toBe(200);
    const created = await rest(t.url, "POST", `/resources/v3alpha/users?ctx.org_id=${orgId}`, {
      token: t.adminPat,
      body: {
        username: "keyforced",
        human: {
          profile: { givenName: "K", familyName: "F" },
          email: { address: "keyforced@example.com", isVerified: true },
          password: { password: PASSWORD },
        },
      },
    });
    expect(created.status).toBe(201);
    const { page, ctx } = await pageWithAuthenticator();
    const finish = await startFlow(page);
    await signInOnPage(page, "keyforced", PASSWORD);
    expect(await page.textContent("h1")).toBe("Add a security key");
    await ceremony(page);
    const { claims } = await finish();
    expect(claims.sub).toBe(created.body.details.id);
    expect(sorted(claims.amr)).toEqual(["hwk", "mfa", "pwd"]);
    expect(claims.acr).toBe("urn:svc:acr:mfa");
    await ctx.close();
  });

  it("forced MFA with TOTP and security keys allowed: the TOTP set-up offers a security key instead", async () => {
    const orgId = await t.org("Keys or apps");
    const patched = await rest(t.url, "PATCH", `/settings/v3alpha/login?ctx.org_id=${orgId}`, {
      token: t.adminPat,
      body: { forceMfa: { set: true }, secondFactors: { set: { value: ["otp", "u2f"] } } },
    });
    expect(patched.status).toBe(200);
    const created = await rest(t.url, "POST", `/resources/v3alpha/users?ctx.org_id=${orgId}`, {
      token: t.adminPat,
      body: {
        username: "keyoroptional",
        human: { profile: { givenName: "K", familyName: "O" }, email: { address: "ko@example.com", isVerified: true }, password: { password: PASSWORD } },
      },
    });
    expect(created.status).toBe(201);
    const { page, ctx } = await pageWithAuthenticator();
    const finish = await startFlow(page);
    await signInOnPage(page, "keyoroptional", PASSWORD);
    expect(await page.textContent("h1")).toBe("Set up an authenticator app");
    await page.click("text=Use a security key instead");
    expect(await page.textContent("h1")).toBe("Add a security key");
    await ceremony(page);
    expect(sorted((await finish()).claims.amr)).toEqual(["hwk", "mfa", "pwd"]);
    await ctx.close();
  });

  it("a forged assertion (another challenge's signature) is refused at the security-key step", async () => {
    await addHuman(t, "keyb", PASSWORD);
    const { page, ctx } = await pageWithAuthenticator();
    await page.goto(`${base()}/ui/login`);
    await signInOnPage(page, "keyb", PASSWORD);
    await page.click("text=Add a security key");
    await ceremony(page);
    await page.goto(`${base()}/ui/login?prompt=login`);
    await signInOnPage(page, "keyb", PASSWORD);
    // Sign a first page's challenge, then post that assertion with a second page's sealed challenge.
    const firstPending = await page.inputValue("input[name=pending]");
    await page.evaluate(() => {
      // Stop the script's own submit, keep the credential it puts into the form.
      HTMLFormElement.prototype.submit = () => undefined;
    });
    await page.click("#webauthn-start");
    await page.waitForFunction(() => (document.querySelector("input[name=credential]") as HTMLInputElement).value !== "");
    const credential = await page.inputValue("input[name=credential]");
    await page.goto(`${base()}/ui/login?prompt=login`);
    await signInOnPage(page, "keyb", PASSWORD);
    const secondPending = await page.inputValue("input[name=pending]");
    expect(secondPending).not.toBe(firstPending);
    // A fresh document: the submit the test stubbed above is the real one again.
    await Promise.all([
      page.waitForURL((u) => u.pathname === "/ui/login/webauthn/login"),
      page.evaluate((c) => {
        (document.querySelector("input[name=credential]") as HTMLInputElement).value = c;
        (document.querySelector("#webauthn form") as HTMLFormElement).submit();
      }, credential),
    ]);
    expect(await page.textContent(".error")).toContain("could not be verified");
    expect(await page.textContent("h1")).toBe("Security key");
    await ctx.close();
  });

  it("a passkey signs in without a password when allowed: amr user hwk mfa; refused when passwordless_allowed is off", async () => {
    const userId = await addHuman(t, "passy", PASSWORD);
    const { page, ctx } = await pageWithAuthenticator();
    // Off by default: no link, the page is not there, and no passkey can be registered.
    await page.goto(`${base()}/ui/login`);
    expect(await page.locator("#passkey").count()).toBe(0);
    expect((await page.goto(`${base()}/ui/login/passkey`))!.status()).toBe(404);
    await page.goto(`${base()}/ui/login`);
    await signInOnPage(page, "passy", PASSWORD);
    await Promise.all([page.waitForEvent("framenavigated"), page.click("text=Add a passkey")]);
    expect(await page.textContent("h1")).not.toBe("Add a passkey");

    expect((await patchLogin({ passwordlessAllowed: { set: true } })).status).toBe(200);
    await page.goto(`${base()}/ui/login`);
    await page.click("text=Add a passkey");
    expect(await page.textContent("h1")).toBe("Add a passkey");
    await ceremony(page);
    expect(await page.textContent("main")).toContain("is registered");

    // A new flow asking for a fresh sign-in: the passkey alone, no login name, no password.
    let finish = await startFlow(page, { prompt: "login" });
    await page.click("#passkey");
    expect(await page.textContent("h1")).toBe("Sign in with a passkey");
    await ceremony(page);
    const { claims, introspection } = await finish();
    expect(claims.sub).toBe(userId);
    expect(sorted(claims.amr)).toEqual(["hwk", "mfa", "user"]);
    expect(claims.acr).toBe("urn:svc:acr:mfa");
    expect(sorted(introspection.amr)).toEqual(["hwk", "mfa", "user"]);

    // Turned off again: the path is gone, and a passkey page opened before is refused on submit.
    finish = await startFlow(page, { prompt: "login" });
    await page.click("#passkey");
    expect((await patchLogin({ passwordlessAllowed: { set: false } })).status).toBe(200);
    await ceremony(page);
    expect(new URL(page.url()).pathname).not.toBe("/cb");
    expect(await page.textContent("main")).toContain("does not exist");
    expect((await page.goto(`${base()}/ui/login/passkey`))!.status()).toBe(404);
    await ctx.close();
  });
});
