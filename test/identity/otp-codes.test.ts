import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/browser.js";
import { rest } from "../support/clients.js";
import { mailsTo, startMessagingServer } from "../support/messaging.js";
import type { TestServer } from "../support/server.js";
import { decodedMail, type MailServer } from "../support/smtp.js";
import type { TargetServer } from "../support/targets.js";
import { addHuman, newPage, signInOnPage, startCodeFlow, startRedirectCatcher, webApp } from "../oidc/rp.js";

/** The sign-in code a mail carries. */
const codeIn = (raw: string) => /sign-in code is (\d{6})\./.exec(decodedMail(raw))![1]!;

let t: TestServer;
let mail: MailServer;
let sms: TargetServer;
let close: () => Promise<void>;
let browser: Browser;
let rp: Awaited<ReturnType<typeof startRedirectCatcher>>;
let web: Awaited<ReturnType<typeof webApp>>;
const PASSWORD = "Secr3t!pass";

beforeAll(async () => {
  ({ t, mail, sms, close } = await startMessagingServer());
  browser = await launchChromium();
  rp = await startRedirectCatcher();
  web = await webApp(t, rp);
});
afterAll(async () => {
  await browser?.close();
  await rp?.close();
  await close?.();
});

const api = (method: string, path: string, body?: unknown) => rest(t.url, method, path, { token: t.adminPat, ...(body ? { body } : {}) });
const allow = (factors: string[]) => api("PATCH", "/settings/v3alpha/login", { secondFactors: { set: { value: factors } } });

/** A code flow in a fresh browser through the password; returns the page and what finishes it (the amr, sorted). */
async function startSignIn(username: string) {
  const { page, ctx } = await newPage(browser);
  const flow = await startCodeFlow(page, { issuer: t.url, app: web, redirectTo: rp });
  await signInOnPage(page, username, PASSWORD);
  const finish = async () => [...((await flow()).claims.amr as string[])].sort();
  return { page, ctx, finish };
}

describe("one-time codes by e-mail and SMS as second factors", () => {
  it("e-mail: turned on through the API and allowed by the login settings, each sign-in mails a code, used once; amr pwd otp mfa", async () => {
    const id = await addHuman(t, "olga", PASSWORD);
    // Not on for the user yet: the password alone.
    expect((await allow(["otp", "otp_email", "otp_sms"])).status).toBe(200);
    let s = await startSignIn("olga");
    expect(await s.finish()).toEqual(["pwd"]);
    await s.ctx.close();

    expect((await api("POST", `/resources/v3alpha/users/${id}/otp_email`)).status).toBe(200);
    expect((await api("POST", `/resources/v3alpha/users/${id}/otp_email`)).status).toBe(409);

    s = await startSignIn("olga");
    expect(await s.page.textContent("h1")).toBe("One-time code");
    const [m] = await mailsTo(mail, "olga@example.com");
    const code = codeIn(m!.raw);
    await s.page.fill("#code", code === "000000" ? "111111" : "000000");
    await s.page.click("button[type=submit]");
    expect(await s.page.textContent(".error")).toContain("not valid");
    await s.page.fill("#code", code);
    await s.page.click("button[type=submit]");
    expect(await s.finish()).toEqual(["mfa", "otp", "pwd"]);
    await s.ctx.close();

    // The next sign-in gets a new code; the used one does not work. (A new code equal to it, one time in a
    // million, proves nothing: then another sign-in.)
    for (let mails = 2; ; mails++) {
      s = await startSignIn("olga");
      if (codeIn((await mailsTo(mail, "olga@example.com", mails))[mails - 1]!.raw) !== code) break;
      await s.ctx.close();
    }
    await s.page.fill("#code", code);
    await s.page.click("button[type=submit]");
    expect(await s.page.textContent(".error")).toContain("not valid");
    await s.ctx.close();

    // Not allowed by the settings (or removed): the password alone again.
    expect((await allow(["otp"])).status).toBe(200);
    s = await startSignIn("olga");
    expect(await s.finish()).toEqual(["pwd"]);
    await s.ctx.close();
    expect((await api("DELETE", `/resources/v3alpha/users/${id}/otp_email`)).status).toBe(200);
    expect((await api("DELETE", `/resources/v3alpha/users/${id}/otp_email`)).status).toBe(404);
  });

  it("SMS: the code goes through the HTTP SMS provider; a user without a verified number cannot turn it on", async () => {
    expect((await allow(["otp", "otp_sms"])).status).toBe(200);
    const id = await addHuman(t, "sam", PASSWORD);
    const refused = await api("POST", `/resources/v3alpha/users/${id}/otp_sms`);
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain("verified phone number");
    expect((await api("PATCH", `/resources/v3alpha/users/${id}`, { human: { phone: { number: "+41790000077", isVerified: true } } })).status).toBe(200);
    expect((await api("POST", `/resources/v3alpha/users/${id}/otp_sms`)).status).toBe(200);

    const s = await startSignIn("sam");
    expect(await s.page.textContent("main")).toContain("We sent a code to your phone by SMS.");
    let got = sms.received.filter((r) => (r.body as { recipient?: string }).recipient === "+41790000077");
    for (let i = 0; i < 200 && !got.length; i++) {
      await new Promise((r) => setTimeout(r, 25));
      got = sms.received.filter((r) => (r.body as { recipient?: string }).recipient === "+41790000077");
    }
    const code = /sign-in code is (\d{6})\./.exec((got[0]!.body as { text: string }).text)![1]!;
    await s.page.fill("#code", code);
    await s.page.click("button[type=submit]");
    expect(await s.finish()).toEqual(["mfa", "otp", "pwd"]);
    await s.ctx.close();
    await allow(["otp"]);
  });
});
