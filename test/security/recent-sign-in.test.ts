import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addHuman } from "../oidc/rp.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { FormClient } from "./browser-form.js";

/**
 * The review's informational point: adding a second factor from the signed-in page needed no recent
 * authentication, so whoever sat at a browser left signed in could add their own authenticator to the account.
 * A sign-in older than five minutes (Keycloak's maximum age for such actions) is asked for the password first.
 */
describe("adding a second factor needs a recent sign-in", () => {
  let t: TestServer;
  const PASSWORD = "Correct!horse9";
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t?.close());

  it("an old sign-in is sent to its password page; after it, the set-up goes on", async () => {
    const id = await addHuman(t, "left-signed-in", PASSWORD);
    const browser = new FormClient(t.url);
    const signedIn = await browser.post("/ui/login/password", { loginName: "left-signed-in", password: PASSWORD });
    const sessionId = /name="sessionId" value="([^"]+)"/.exec(signedIn.body)?.[1];
    expect(sessionId, signedIn.body.slice(0, 400)).toBeTruthy();
    // fresh: the set-up page with a secret
    expect((await browser.post("/ui/login/otp/setup", { sessionId: sessionId! })).body).toContain('id="otp-secret"');

    await t.server.db.prisma.loginSession.update({ where: { id: sessionId! }, data: { authTime: new Date(Date.now() - 6 * 60_000), usedAt: new Date() } });
    const asked = await browser.post("/ui/login/otp/setup", { sessionId: sessionId! });
    expect(asked.status).toBe(401);
    expect(asked.body).toContain("enter your password again");
    expect(asked.body).not.toContain('id="otp-secret"');
    const keys = await browser.post("/ui/login/webauthn/setup", { sessionId: sessionId!, purpose: "u2f" });
    expect(keys.status).toBe(401);
    // the confirmation's wrong-code page shows a new secret: a start as much as the set-up page (found in review)
    const confirm = await browser.post("/ui/login/otp/setup/verify", { sessionId: sessionId!, code: "000000" });
    expect(confirm.status).toBe(401);
    expect(confirm.body).not.toContain('id="otp-secret"');

    expect(await browser.signIn("left-signed-in", PASSWORD)).toBe(200);
    expect((await browser.post("/ui/login/otp/setup", { sessionId: sessionId! })).body).toContain('id="otp-secret"');
    expect(await t.server.db.prisma.userTotp.count({ where: { userId: id } })).toBe(1);
  });
});
