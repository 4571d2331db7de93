import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/browser.js";
import { rest } from "../support/clients.js";
import { mailsTo, startMessagingServer } from "../support/messaging.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { linkIn, type MailServer } from "../support/smtp.js";
import { addHuman, newPage, signInOnPage } from "../oidc/rp.js";

let t: TestServer;
let mail: MailServer;
let close: () => Promise<void>;
let browser: Browser;
const PASSWORD = "Secr3t!pass";
const NEW_PASSWORD = "N3w!password";

beforeAll(async () => {
  ({ t, mail, close } = await startMessagingServer());
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await close?.();
});

const api = (method: string, path: string, body?: unknown) =>
  rest(t.url, method, `/resources/v3alpha${path}`, { token: t.adminPat, ...(body ? { body } : {}) });

/** Signs in on a fresh page of its own browser context; the page's main text after it. */
async function signInText(username: string, password: string) {
  const { page, ctx } = await newPage(browser);
  await page.goto(`${t.url}/ui/login`);
  await signInOnPage(page, username, password);
  const text = await page.textContent("main");
  await ctx.close();
  return text ?? "";
}

async function setPasswordOnPage(page: Page, password: string) {
  await page.fill("#newPassword", password);
  await page.fill("#confirmPassword", password);
  await page.click("button[type=submit]");
}

describe("verification and recovery through the login UI", () => {
  it("verifies an e-mail address by the mailed link, once", async () => {
    const r = await api("POST", "/users", {
      username: "eve",
      human: { profile: { givenName: "Eve", familyName: "Tester" }, email: { address: "eve@example.com" }, password: { password: PASSWORD } },
    });
    const id = r.body.details.id as string;
    const [m] = await mailsTo(mail, "eve@example.com");
    const link = linkIn(m!.raw, "/ui/login/email/verify");
    const { page, ctx } = await newPage(browser);
    const res = await page.goto(`${t.url}${link}`);
    expect(res!.status()).toBe(200);
    // The security headers of the other pages.
    expect(res!.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(res!.headers()["x-frame-options"]).toBe("DENY");
    expect(await page.textContent("main")).toContain("Your e-mail address is verified.");
    expect((await api("GET", `/users/${id}`)).body.user.human.email.isVerified).toBe(true);

    // Used: the link now shows the code form with an error, and verifies nothing.
    const second = await page.goto(`${t.url}${link}`);
    expect(second!.status()).toBe(400);
    expect(await page.textContent(".error")).toContain("The code is wrong, used or expired.");
    await ctx.close();
  });

  it("verifies an e-mail address with the code typed into the form (German page)", async () => {
    const r = await api("POST", "/users", {
      username: "dora",
      human: { profile: { givenName: "Dora", familyName: "Tester" }, email: { address: "dora@example.com" }, password: { password: PASSWORD } },
    });
    const id = r.body.details.id as string;
    const [m] = await mailsTo(mail, "dora@example.com");
    const code = new URL(linkIn(m!.raw, "/ui/login/email/verify"), t.url).searchParams.get("code")!;
    const { page, ctx } = await newPage(browser);
    await page.goto(`${t.url}/ui/login/email/verify?userId=${id}&ui_locales=de`);
    expect(await page.textContent("h1")).toBe("E-Mail-Adresse bestätigen");
    await page.fill("#code", "WRONG123");
    await page.click("button[type=submit]");
    expect(await page.textContent(".error")).toContain("Der Code ist falsch");
    await page.fill("#code", code);
    await page.click("button[type=submit]");
    expect(await page.textContent("main")).toContain("Ihre E-Mail-Adresse ist bestätigt.");
    await ctx.close();
    expect((await api("GET", `/users/${id}`)).body.user.human.email.isVerified).toBe(true);
  });

  it("forgot password end to end: same answer for unknown names, mailed link sets a new password once, old one refused, expired link refused", async () => {
    await addHuman(t, "fred", PASSWORD);
    const { page, ctx } = await newPage(browser);
    await page.goto(`${t.url}/ui/login`);
    await page.fill("#loginName", "fred");
    await page.click("button[type=submit]");
    await page.click("text=Forgot your password?");
    expect(await page.textContent("h1")).toBe("Reset your password");
    expect(await page.inputValue("#loginName")).toBe("fred");
    await page.click("button[type=submit]");
    const knownText = await page.textContent("main");
    expect(knownText).toContain("If an account with this login name exists, we sent a link");

    // An unknown login name: the same page (and no faster: password-reset.timing.test.ts).
    await page.goto(`${t.url}/ui/login/password/reset`);
    await page.fill("#loginName", "nobody-here");
    await page.click("button[type=submit]");
    expect(await page.textContent("main")).toBe(knownText);

    const [m] = await mailsTo(mail, "fred@example.com");
    const link = linkIn(m!.raw, "/ui/login/password/reset");
    await page.goto(`${t.url}${link}`);
    expect(await page.textContent("h1")).toBe("Choose your password");
    // The complexity settings apply.
    await setPasswordOnPage(page, "weak");
    expect(await page.textContent(".error")).toContain("The password needs");
    await setPasswordOnPage(page, NEW_PASSWORD);
    expect(await page.textContent("main")).toContain("Your password is set.");

    expect(await signInText("fred", NEW_PASSWORD)).toContain("Signed in as");
    expect(await signInText("fred", PASSWORD)).toContain("The login name or password is wrong");

    // Used: refused.
    const reused = await page.goto(`${t.url}${link}`);
    expect(reused!.status()).toBe(400);
    expect(await page.textContent("main")).toContain("This link is not valid");

    // Expired: a new link whose time is over (moved into the past, as if the hour went by) is refused, on the
    // page and when its form is posted.
    await page.goto(`${t.url}/ui/login/password/reset?loginName=fred`);
    await page.click("button[type=submit]");
    const mails = await mailsTo(mail, "fred@example.com", 2);
    const link2 = linkIn(mails[1]!.raw, "/ui/login/password/reset");
    await page.goto(`${t.url}${link2}`);
    expect(await page.textContent("h1")).toBe("Choose your password");
    await t.server.db.prisma.userCode.updateMany({ where: { kind: "password" }, data: { expiresAt: new Date(Date.now() - 1000) } });
    await setPasswordOnPage(page, "Another!pass1");
    expect(await page.textContent("main")).toContain("This link is not valid");
    expect((await page.goto(`${t.url}${link2}`))!.status()).toBe(400);
    expect(await signInText("fred", NEW_PASSWORD)).toContain("Signed in as");
    await ctx.close();
  });

  it("a user created without a password sets it from the mailed link, which also verifies the address", async () => {
    const r = await api("POST", "/users", {
      username: "nina",
      human: { profile: { givenName: "Nina", familyName: "Tester" }, email: { address: "nina@example.com" } },
    });
    const id = r.body.details.id as string;
    const [m] = await mailsTo(mail, "nina@example.com");
    const link = linkIn(m!.raw, "/ui/login/password/init");
    const { page, ctx } = await newPage(browser);
    await page.goto(`${t.url}${link}`);
    await setPasswordOnPage(page, NEW_PASSWORD);
    expect(await page.textContent("main")).toContain("Your password is set.");
    const user = (await api("GET", `/users/${id}`)).body.user;
    expect(user.state).toBe("USER_STATE_ACTIVE");
    expect(user.human.email.isVerified).toBe(true);
    expect(await signInText("nina", NEW_PASSWORD)).toContain("Signed in as");
    expect((await page.goto(`${t.url}${link}`))!.status()).toBe(400);
    await ctx.close();
  });

  it("changes the password of a signed-in account with the current one", async () => {
    await addHuman(t, "carl", PASSWORD);
    const { page, ctx } = await newPage(browser);
    await page.goto(`${t.url}/ui/login`);
    await signInOnPage(page, "carl", PASSWORD);
    await page.click("text=Change your password");
    await page.fill("#currentPassword", "not-it");
    await setPasswordOnPage(page, NEW_PASSWORD);
    expect(await page.textContent(".error")).toContain("The current password is wrong.");
    await page.fill("#currentPassword", PASSWORD);
    await setPasswordOnPage(page, NEW_PASSWORD);
    expect(await page.textContent("main")).toContain("Your password is changed.");
    await ctx.close();
    expect(await signInText("carl", NEW_PASSWORD)).toContain("Signed in as");
    expect(await signInText("carl", PASSWORD)).toContain("The login name or password is wrong");
  });

  it("a user locked after too many wrong passwords is mailed a link that unlocks it, once", async () => {
    const limit = await rest(t.url, "PATCH", "/settings/v3alpha/lockout", { token: t.adminPat, body: { maxPasswordAttempts: { set: 2 } } });
    expect(limit.status, JSON.stringify(limit.body)).toBe(200);
    const id = await addHuman(t, "lou", PASSWORD);
    await signInText("lou", "wrong-1");
    await signInText("lou", "wrong-2");
    expect((await api("GET", `/users/${id}`)).body.user.state).toBe("USER_STATE_LOCKED");
    expect(await signInText("lou", PASSWORD)).toContain("The login name or password is wrong");

    const [m] = await mailsTo(mail, "lou@example.com");
    const link = linkIn(m!.raw, "/ui/login/unlock");
    expect(link).toMatch(new RegExp(`^/ui/login/unlock\\?userId=${id}&code=[A-Z2-9]{8}$`));
    const { page, ctx } = await newPage(browser);
    await page.goto(`${t.url}${link}`);
    // Opening the link changes nothing (a mail scanner may open it); the button unlocks.
    expect((await api("GET", `/users/${id}`)).body.user.state).toBe("USER_STATE_LOCKED");
    await page.click("button[type=submit]");
    expect(await page.textContent("main")).toContain("Your account is unlocked.");
    expect(await signInText("lou", PASSWORD)).toContain("Signed in as");
    const unlocked = await t.server.db.prisma.event.findFirstOrThrow({ where: { aggregateId: id, type: "user.user.unlocked" } });
    expect(unlocked.creator).toBe(id);

    await page.goto(`${t.url}${link}`);
    await page.click("button[type=submit]");
    expect(await page.textContent("main")).toContain("This link is not valid");
    await ctx.close();
    await rest(t.url, "PATCH", "/settings/v3alpha/lockout", { token: t.adminPat, body: { maxPasswordAttempts: { reset: true } } });
  });

  it("the new forms need the CSRF token", async () => {
    const r = await rest(t.url, "POST", "/ui/login/password/reset/request", {
      body: "loginName=fred&csrf=forged",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(r.status).toBe(403);
  });
});

describe("rate limits on the recovery forms", () => {
  let limited: TestServer;
  beforeAll(async () => {
    // The longest window a rule takes: windows are aligned on the epoch, and one ending mid-test would reset the count.
    limited = await startTestServer({ SVC_RATE_LIMIT_LOGIN_ADDRESS: "3/9999999" });
  });
  afterAll(() => limited?.close());

  it("count per address with the login forms: the 4th request is 429 with Retry-After, code links included", async () => {
    const form = await rest(limited.url, "GET", "/ui/login/password/reset");
    const cookie = String(form.headers["set-cookie"]).split(";")[0]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(form.body as string)![1]!;
    const request = () =>
      rest(limited.url, "POST", "/ui/login/password/reset/request", {
        body: new URLSearchParams({ loginName: "nobody", csrf }).toString(),
        headers: { "content-type": "application/x-www-form-urlencoded", cookie },
      });
    for (let i = 0; i < 3; i++) expect((await request()).status).toBe(200);
    const refused = await request();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
    // A link with a code counts too: guessing codes by GET is no faster.
    expect((await rest(limited.url, "GET", "/ui/login/email/verify?userId=x&code=ABCDEFGH")).status).toBe(429);
    expect((await rest(limited.url, "GET", "/ui/login/password/init?userId=x&code=ABCDEFGH")).status).toBe(429);
  });
});
