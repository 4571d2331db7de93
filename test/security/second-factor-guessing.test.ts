import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addHuman } from "../oidc/rp.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { awayFromPeriodEnd, totpCode, wrongTotpCode } from "../support/totp.js";
import { FormClient } from "./browser-form.js";

/**
 * Security review, finding 5: TOTP codes had neither an attempt count nor a replay check (40 wrong codes with one
 * pending sign-in, then the right one; the same code again in a second sign-in). Wrong codes now count toward
 * the lockout like wrong passwords, and an accepted code is used up (RFC 6238 §5.2). Finding 21: the GET of a
 * password link tested codes for free; it now counts a wrong one against the code as the form does.
 */
describe("second factors and links under guessing", () => {
  let t: TestServer;
  const PASSWORD = "Correct!horse9";
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t?.close());

  async function withTotp(username: string): Promise<{ id: string; secret: string }> {
    const id = await addHuman(t, username, PASSWORD);
    const secret = (await rest(t.url, "POST", `/resources/v3alpha/users/${id}/totp`, { token: t.adminPat, body: {} })).body.secret as string;
    // enrolled with the previous period's code, so that the current one is still unused for the sign-ins below;
    // not at a period's end, where the previous period's code would leave the window before the request lands
    await awayFromPeriodEnd();
    const verified = await rest(t.url, "POST", `/resources/v3alpha/users/${id}/totp/_verify`, { token: t.adminPat, body: { code: totpCode(secret, -30_000) } });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    return { id, secret };
  }

  /** Signs in with the password; the code page's pending token. */
  async function pendingCode(browser: FormClient, username: string): Promise<string> {
    const page = await browser.post("/ui/login/password", { loginName: username, password: PASSWORD });
    const pending = /name="pending" value="([^"]+)"/.exec(page.body)?.[1];
    expect(pending, page.body.slice(0, 300)).toBeTruthy();
    return pending!;
  }

  it("wrong codes lock the account at the lockout's limit; then the right code does not sign in", async () => {
    const { id, secret } = await withTotp("bob");
    const browser = new FormClient(t.url);
    const pending = await pendingCode(browser, "bob");
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await browser.post("/ui/login/otp", { pending, code: wrongTotpCode(secret) })).status);
    expect(statuses.every((s) => s === 401)).toBe(true);
    const user = await t.server.db.prisma.user.findUniqueOrThrow({ where: { id } });
    expect(user.state).toBe("locked");
    const failed = await t.server.db.prisma.event.count({ where: { aggregateId: id, type: "user.totp.check_failed" } });
    expect(failed).toBe(5);
    expect((await browser.post("/ui/login/otp", { pending, code: totpCode(secret) })).status).toBe(401);
  });

  it("an accepted code is used up: the same code in a second sign-in is refused", async () => {
    const { secret } = await withTotp("carol");
    const code = totpCode(secret);
    const first = new FormClient(t.url);
    expect((await first.post("/ui/login/otp", { pending: await pendingCode(first, "carol"), code })).status).toBe(200);
    const second = new FormClient(t.url);
    const replayed = await second.post("/ui/login/otp", { pending: await pendingCode(second, "carol"), code });
    expect(replayed.status).toBe(401);
  });

  it("a right code after wrong ones starts the count again", async () => {
    const { id, secret } = await withTotp("dora");
    const browser = new FormClient(t.url);
    const pending = await pendingCode(browser, "dora");
    for (let i = 0; i < 3; i++) expect((await browser.post("/ui/login/otp", { pending, code: wrongTotpCode(secret) })).status).toBe(401);
    expect((await t.server.db.prisma.user.findUniqueOrThrow({ where: { id } })).otpFailures).toBe(3);
    expect((await browser.post("/ui/login/otp", { pending, code: totpCode(secret) })).status).toBe(200);
    expect((await t.server.db.prisma.user.findUniqueOrThrow({ where: { id } })).otpFailures).toBe(0);
  });

  it("a right password does not start the codes' count again: four wrong codes a round still lock at the fifth", async () => {
    const { id, secret } = await withTotp("fred");
    const statuses: number[] = [];
    for (let round = 0; round < 3; round++) {
      // who knows the password signs in again between rounds of guesses at the code
      const browser = new FormClient(t.url);
      const pending = await pendingCode(browser, "fred").catch(() => undefined);
      if (!pending) break;
      for (let i = 0; i < 4; i++) statuses.push((await browser.post("/ui/login/otp", { pending, code: wrongTotpCode(secret) })).status);
    }
    const user = await t.server.db.prisma.user.findUniqueOrThrow({ where: { id } });
    expect(user.state).toBe("locked");
    expect(await t.server.db.prisma.event.count({ where: { aggregateId: id, type: "user.totp.check_failed" } })).toBe(5);
  });

  it("the password link's GET counts wrong codes: five spend the code, and the right one no longer works (finding 21)", async () => {
    const id = await addHuman(t, "erin", PASSWORD);
    const reset = await rest(t.url, "POST", `/resources/v3alpha/users/${id}/password/_reset`, { token: t.adminPat, body: { returnCode: true } });
    const code = reset.body.verificationCode as string;
    expect(code).toBeTruthy();
    const browser = new FormClient(t.url);
    // codes are upper case: a lower-case guess is never the code
    for (let i = 0; i < 5; i++) expect((await browser.request("GET", `/ui/login/password/reset?userId=${id}&code=wrong${i}`)).status).toBe(400);
    expect((await browser.request("GET", `/ui/login/password/reset?userId=${id}&code=${code}`)).status).toBe(400);
  });
});
