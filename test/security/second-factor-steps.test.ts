import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addHuman } from "../oidc/rp.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { FormClient } from "./browser-form.js";

/**
 * Found while closing the review (its helper's reproduction): after the password, the e-mail/SMS code step and
 * the security-key step sent their page, but the sign-in went on as if there were none (an awaited reply is
 * undefined), and completed with the password alone: the browser then held the user's session.
 */
describe("a second factor's step stops the sign-in until it is passed", () => {
  let t: TestServer;
  const PASSWORD = "Correct!horse9";
  beforeAll(async () => {
    t = await startTestServer();
    const allowed = await rest(t.url, "PATCH", "/settings/v3alpha/login", {
      token: t.adminPat,
      body: { secondFactors: { set: { value: ["otp", "otp_email"] } } },
    });
    expect(allowed.status).toBe(200);
  });
  afterAll(() => t?.close());

  it("a user with e-mail codes gets the code page and no session", async () => {
    const id = await addHuman(t, "victim", PASSWORD);
    expect((await rest(t.url, "POST", `/resources/v3alpha/users/${id}/otp_email`, { token: t.adminPat })).status).toBe(200);
    await addHuman(t, "someone", PASSWORD);
    // a browser that holds a session already: a session made for the victim would be this browser's
    const browser = new FormClient(t.url);
    expect(await browser.signIn("someone", PASSWORD)).toBe(200);
    const page = await browser.post("/ui/login/password", { loginName: "victim", password: PASSWORD });
    expect(page.status).toBe(200);
    expect(page.body).toMatch(/name="pending"/);
    // the handler must have stopped at the page: nothing more happens after it
    await new Promise((r) => setTimeout(r, 1000));
    expect(await t.server.db.prisma.loginSession.count({ where: { userId: id } })).toBe(0);
    const chooser = await browser.request("GET", "/ui/login");
    expect(chooser.body).toContain("Someone Tester");
    expect(chooser.body).not.toContain("Victim Tester");
  });
});
