import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * Security review, finding 1: `user.write` in an organisation (ORG_USER_MANAGER, ORG_OWNER) minted a PAT for,
 * set the password of, or added a key to any user of it, the first instance's `admin-service` (IAM_OWNER and
 * SYSTEM_OWNER) included: a help-desk account became system owner in three calls. A caller may now change
 * only users whose memberships' permissions it holds itself where they apply.
 */
describe("privilege ceiling on user administration", () => {
  let t: TestServer;
  let adminService: string;
  let admin: string;
  let helpdesk: string;
  let orgOwner: string;
  let iamOwner: string;
  let plain: string;
  beforeAll(async () => {
    t = await startTestServer();
    const idOf = async (loginName: string) => (await t.server.db.prisma.user.findFirstOrThrow({ where: { instanceId: t.instanceId, loginName } })).id;
    adminService = await idOf("admin-service");
    admin = await idOf("admin");
    helpdesk = (await t.serviceUser("helpdesk", [{ type: "org", id: t.defaultOrgId, roles: ["ORG_USER_MANAGER"] }])).token;
    orgOwner = (await t.serviceUser("org-owner", [{ type: "org", id: t.defaultOrgId, roles: ["ORG_OWNER"] }])).token;
    iamOwner = (await t.serviceUser("iam-owner", [{ type: "instance", id: t.instanceId, roles: ["IAM_OWNER"] }])).token;
    const created = await rest(t.url, "POST", "/resources/v3alpha/users", { token: t.adminPat, body: { username: "plain-bot", machine: { name: "Plain" } } });
    expect(created.status).toBe(201);
    plain = created.body.details.id;
  });
  afterAll(() => t?.close());

  const denied = (r: { status: number; body: any }, what = "") => {
    expect(r.status, `${what} ${JSON.stringify(r.body)}`).toBe(403);
    expect(r.body.message).toMatch(/member with .* only a caller holding those permissions/);
  };

  it("an ORG_USER_MANAGER cannot mint a PAT for the system owner (the review's three calls)", async () => {
    const minted = await rest(t.url, "POST", `/resources/v3alpha/users/${adminService}/pats`, { token: helpdesk, body: {} });
    denied(minted);
    expect(minted.body.token).toBeUndefined();
  });

  it("nor set the human admin's password, lock, deactivate, delete it or add a key, secret, TOTP or metadata", async () => {
    const calls: [string, string, unknown?][] = [
      ["POST", `/resources/v3alpha/users/${admin}/_set_password`, { password: "Taken0ver!Password" }],
      ["POST", `/resources/v3alpha/users/${admin}/_lock`],
      ["POST", `/resources/v3alpha/users/${admin}/_deactivate`],
      ["POST", `/resources/v3alpha/users/${admin}/password/_reset`, { returnCode: true }],
      ["POST", `/resources/v3alpha/users/${admin}/totp`],
      ["POST", `/resources/v3alpha/users/${admin}/metadata`, { metadata: [{ key: "k", value: "dg==" }] }],
      ["PATCH", `/resources/v3alpha/users/${admin}`, { human: { email: { address: "attacker@evil.example" } } }],
      ["POST", `/resources/v3alpha/users/${adminService}/keys`, {}],
      ["POST", `/resources/v3alpha/users/${adminService}/_generate_secret`],
      ["DELETE", `/resources/v3alpha/users/${adminService}`],
    ];
    for (const [method, path, body] of calls)
      denied(await rest(t.url, method, path, { token: helpdesk, body: method === "DELETE" ? undefined : (body ?? {}) }), `${method} ${path}`);
    // reading is not changing: the help desk still sees them
    expect((await rest(t.url, "GET", `/resources/v3alpha/users/${admin}`, { token: helpdesk })).status).toBe(200);
  });

  it("an ORG_OWNER cannot act on an IAM_OWNER, an IAM_OWNER not on a SYSTEM_OWNER, but on a peer", async () => {
    const peer = await t.serviceUser("iam-peer", [{ type: "instance", id: t.instanceId, roles: ["IAM_OWNER"] }]);
    denied(await rest(t.url, "POST", `/resources/v3alpha/users/${peer.userId}/_lock`, { token: orgOwner }));
    // the first instance's admins are SYSTEM_OWNER too (docs/decisions.md, "Tenancy and roles")
    denied(await rest(t.url, "POST", `/resources/v3alpha/users/${adminService}/pats`, { token: iamOwner, body: {} }));
    denied(await rest(t.url, "POST", `/resources/v3alpha/users/${admin}/_set_password`, { token: iamOwner, body: { password: "Taken0ver!Password" } }));
    expect((await rest(t.url, "POST", `/resources/v3alpha/users/${peer.userId}/pats`, { token: iamOwner, body: {} })).status).toBe(201);
  });

  it("users without memberships stay manageable by the help desk, and a system owner manages everyone", async () => {
    expect((await rest(t.url, "POST", `/resources/v3alpha/users/${plain}/pats`, { token: helpdesk, body: {} })).status).toBe(201);
    expect((await rest(t.url, "POST", `/resources/v3alpha/users/${plain}/_lock`, { token: helpdesk })).status).toBe(200);
    expect(
      (await rest(t.url, "POST", `/resources/v3alpha/users/${admin}/metadata`, { token: t.adminPat, body: { metadata: [{ key: "k2", value: "dg==" }] } }))
        .status,
    ).toBe(200);
  });

  it("an ORG_USER_MANAGER cannot act on an ORG_OWNER of its organisation, but an ORG_OWNER can act on a peer", async () => {
    const peer = await t.serviceUser("peer-owner", [{ type: "org", id: t.defaultOrgId, roles: ["ORG_OWNER"] }]);
    denied(await rest(t.url, "POST", `/resources/v3alpha/users/${peer.userId}/pats`, { token: helpdesk, body: {} }));
    expect((await rest(t.url, "POST", `/resources/v3alpha/users/${peer.userId}/pats`, { token: orgOwner, body: {} })).status).toBe(201);
  });

  it("a project owner is covered from the project's organisation, not by a user manager", async () => {
    const project = await rest(t.url, "POST", "/resources/v3alpha/projects", { token: t.adminPat, body: { name: "Ceiling" } });
    expect(project.status).toBe(201);
    const owner = await t.serviceUser("project-owner");
    const member = await rest(t.url, "POST", "/resources/v3alpha/memberships", {
      token: t.adminPat,
      body: { userId: owner.userId, context: { projectId: project.body.details.id }, roles: ["PROJECT_OWNER"] },
    });
    expect(member.status).toBe(201);
    denied(await rest(t.url, "POST", `/resources/v3alpha/users/${owner.userId}/pats`, { token: helpdesk, body: {} }));
    expect((await rest(t.url, "POST", `/resources/v3alpha/users/${owner.userId}/pats`, { token: orgOwner, body: {} })).status).toBe(201);
  });

  it("a user may still change itself", async () => {
    const self = await t.server.db.prisma.user.findFirstOrThrow({ where: { instanceId: t.instanceId, loginName: "helpdesk" } });
    expect((await rest(t.url, "POST", `/resources/v3alpha/users/${self.id}/pats`, { token: helpdesk, body: {} })).status).toBe(201);
  });
});
