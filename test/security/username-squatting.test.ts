import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { FormClient } from "./browser-form.js";

/**
 * Security review, finding 12: Acme verified `acme.test` and has `carol`; a user manager of another organisation
 * created the user `carol@acme.test`, which won the login-name lookup: Carol's own password was refused and the
 * impostor's signed in as `carol@acme.test`. Usernames on another organisation's verified domain are refused now,
 * everywhere a username is chosen, and the lookup never lets such a user shadow the domain's own.
 */
describe("usernames on another organisation's verified domain", () => {
  let t: TestServer;
  let acme: string;
  let carolId: string;
  const PASSWORD = "Correct!horse9";
  const api = (method: string, path: string, body?: unknown) => rest(t.url, method, path, { token: t.adminPat, ...(body ? { body } : {}) });
  const human = (username: string, password = PASSWORD) => ({
    username,
    human: {
      profile: { givenName: "C", familyName: "T" },
      email: { address: `${username.replace("@", ".")}@example.com`, isVerified: true },
      password: { password },
    },
  });
  beforeAll(async () => {
    t = await startTestServer();
    acme = await t.org("Acme");
    expect((await api("PATCH", `/settings/v3alpha/domain?ctx.org_id=${acme}`, { validateOrgDomains: { set: false } })).status).toBe(200);
    expect((await api("POST", `/resources/v3alpha/organizations/${acme}/domains`, { domain: "acme.test" })).status).toBe(201);
    const carol = await api("POST", `/resources/v3alpha/users?ctx.org_id=${acme}`, human("carol"));
    expect(carol.status, JSON.stringify(carol.body)).toBe(201);
    carolId = carol.body.details.id;
  });
  afterAll(() => t?.close());

  it("refuses creating, renaming to and importing such a username in another organisation", async () => {
    const created = await api("POST", "/resources/v3alpha/users", human("carol@acme.test", "Impostor!pass9"));
    expect(created.status).toBe(400);
    expect(created.body.message).toMatch(/username.*acme\.test is a verified domain of another organization/);
    const plain = await api("POST", "/resources/v3alpha/users", human("mallory"));
    expect(plain.status).toBe(201);
    const renamed = await api("PATCH", `/resources/v3alpha/users/${plain.body.details.id}`, { human: { username: "CAROL@Acme.Test" } });
    expect(renamed.status).toBe(400);
    const imported = await rest(t.url, "POST", "/management/v1/users/human/_import", {
      token: t.adminPat,
      body: {
        userName: "carol@acme.test",
        profile: { firstName: "C", lastName: "T" },
        email: { email: "x@example.com", isEmailVerified: true },
        password: "Impostor!pass9",
      },
    });
    expect(imported.status).toBe(400);
    expect(JSON.stringify(imported.body)).toContain("acme.test");
  });

  it("self-registration with such a username is refused with the form again, not a server error", async () => {
    expect((await api("PATCH", "/settings/v3alpha/login", { allowRegister: { set: true } })).status).toBe(200);
    const page = await new FormClient(t.url).post(
      "/ui/login/register",
      { givenName: "C", familyName: "T", email: "c@example.com", loginName: "carol@acme.test", newPassword: PASSWORD, confirmPassword: PASSWORD },
      "/ui/login/register",
    );
    expect(page.status).toBe(400);
    expect(page.body).toContain('name="loginName"');
  });

  it("the organisation that verified the domain may use it in usernames", async () => {
    expect((await api("POST", `/resources/v3alpha/users?ctx.org_id=${acme}`, human("dave@acme.test"))).status).toBe(201);
  });

  it("an impostor stored before the check does not win the login name: carol@acme.test is Carol", async () => {
    // as if created before this check existed: written straight into the projection's username
    const impostor = await api("POST", "/resources/v3alpha/users", human("impostor", "Impostor!pass9"));
    await t.server.db.prisma.user.update({ where: { id: impostor.body.details.id }, data: { username: "carol@acme.test", loginName: "carol@acme.test" } });
    expect(await new FormClient(t.url).signIn("carol@acme.test", "Impostor!pass9")).toBe(401);
    expect(await new FormClient(t.url).signIn("carol@acme.test", PASSWORD)).toBe(200);
    const carol = await t.server.db.prisma.user.findUniqueOrThrow({ where: { id: carolId } });
    expect(carol.passwordFailures).toBe(0);
  });
});
