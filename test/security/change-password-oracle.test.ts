import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * Found in review of the privilege ceiling: ChangePassword with the current password was exempt from the ceiling
 * (the user's own secret proves it) but its check counted nothing, so a user manager kept from setting an
 * administrator's password could guess it at API speed, and a locked user's password could be changed. The
 * current password is now checked as at a sign-in.
 */
describe("ChangePassword's current password is checked as at a sign-in", () => {
  let t: TestServer;
  let helpdesk: string;
  let ownerId: string;
  const PASSWORD = "Correct!horse9";
  beforeAll(async () => {
    t = await startTestServer();
    helpdesk = (await t.serviceUser("helpdesk", [{ type: "org", id: t.defaultOrgId, roles: ["ORG_USER_MANAGER"] }])).token;
    const owner = await rest(t.url, "POST", "/resources/v3alpha/users", {
      token: t.adminPat,
      body: {
        username: "owner",
        human: { profile: { givenName: "O", familyName: "W" }, email: { address: "owner@example.com" }, password: { password: PASSWORD } },
      },
    });
    ownerId = owner.body.details.id;
    const member = await rest(t.url, "POST", "/resources/v3alpha/memberships", {
      token: t.adminPat,
      body: { userId: ownerId, context: { instance: true }, roles: ["IAM_OWNER"] },
    });
    expect(member.status).toBe(201);
  });
  afterAll(() => t?.close());

  const change = (current: string) =>
    rest(t.url, "POST", `/resources/v3alpha/users/${ownerId}/password/_change`, {
      token: helpdesk,
      body: { currentPassword: current, newPassword: "Taken0ver!Password" },
    });

  it("wrong guesses count toward the lockout; then even the right one changes nothing", async () => {
    expect(
      (await rest(t.url, "POST", `/resources/v3alpha/users/${ownerId}/_set_password`, { token: helpdesk, body: { password: "Taken0ver!Password" } })).status,
    ).toBe(403);
    for (let i = 0; i < 5; i++) expect((await change(`guess-${i}`)).status).toBe(400);
    const owner = await t.server.db.prisma.user.findUniqueOrThrow({ where: { id: ownerId } });
    expect(owner.state).toBe("locked");
    const right = await change(PASSWORD);
    expect(right.status).toBe(400);
    const after = await t.server.db.prisma.user.findUniqueOrThrow({ where: { id: ownerId } });
    expect(after.passwordHash).toBe(owner.passwordHash);
  });
});
