import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

// Project grants travel: the grant, its members and the user grants of the granted organisation's users, whatever
// the order of the organisations in the file (links are imported once every organisation has its users).
let a: TestServer;
let b: TestServer;
const ids = { owner: "", partner: "", project: "", grant: "", partnerUser: "", userGrant: "" };
const call = (t: TestServer, method: string, path: string, body?: unknown) => rest(t.url, method, path, { token: t.adminPat, ...(body ? { body } : {}) });
const ok = async (p: ReturnType<typeof call>, status = 200) => {
  const r = await p;
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  return r.body;
};

beforeAll(async () => {
  [a, b] = await Promise.all([startTestServer(), startTestServer()]);
  ids.owner = await a.org("Grant Owner");
  ids.partner = await a.org("Grant Partner");
  ids.project = (await ok(call(a, "POST", `/resources/v3alpha/projects?ctx.org_id=${ids.owner}`, { name: "Granted" }), 201)).details.id;
  for (const key of ["r1", "r2"]) await ok(call(a, "POST", `/resources/v3alpha/projects/${ids.project}/roles`, { key, displayName: key }), 201);
  ids.grant = (
    await ok(call(a, "POST", `/resources/v3alpha/projects/${ids.project}/grants`, { grantedOrganizationId: ids.partner, roleKeys: ["r1"] }), 201)
  ).details.id;
  ids.partnerUser = (
    await ok(call(a, "POST", `/resources/v3alpha/users?ctx.org_id=${ids.partner}`, { username: "partner-admin", machine: { name: "Partner admin" } }), 201)
  ).details.id;
  ids.userGrant = (
    await ok(call(a, "POST", "/resources/v3alpha/user_grants", { userId: ids.partnerUser, projectId: ids.project, roleKeys: ["r1"] }), 201)
  ).details.id;
  await ok(
    call(a, "POST", "/resources/v3alpha/memberships", { userId: ids.partnerUser, context: { projectGrantId: ids.grant }, roles: ["PROJECT_GRANT_OWNER"] }),
    201,
  );
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

describe("export and import of project grants", () => {
  it("exports the grant and its members with the granting organisation", async () => {
    const exported = await ok(call(a, "POST", "/admin/v1/export", { orgIds: [ids.owner], responseOutput: true }));
    expect(exported.orgs[0].projectGrants).toEqual([
      { grantId: ids.grant, projectGrant: { projectId: ids.project, grantedOrgId: ids.partner, roleKeys: ["r1"] } },
    ]);
    expect(exported.orgs[0].projectGrantMembers).toEqual([
      { projectId: ids.project, grantId: ids.grant, userId: ids.partnerUser, roles: ["PROJECT_GRANT_OWNER"] },
    ]);
  });

  it("imports them into another server, the granting organisation first in the file; twice creates nothing twice", async () => {
    const exported = await ok(call(a, "POST", "/admin/v1/export", { orgIds: [ids.owner, ids.partner], responseOutput: true }));
    expect(exported.orgs.map((o: { orgId: string }) => o.orgId)).toEqual([ids.owner, ids.partner]);
    const imported = await ok(call(b, "POST", "/admin/v1/import", { timeout: "1m", dataOrgs: exported }));
    expect(imported.errors ?? []).toEqual([]);
    const owner = imported.success.orgs.find((o: { orgId: string }) => o.orgId === ids.owner);
    expect(owner.projectGrants).toEqual([{ grantId: ids.grant, projectId: ids.project, orgId: ids.partner }]);
    expect(owner.projectGrantMembers).toEqual([{ projectId: ids.project, grantId: ids.grant, userId: ids.partnerUser }]);
    expect(owner.userGrants).toEqual([{ userId: ids.partnerUser, projectId: ids.project }]);

    const grant = await ok(call(b, "GET", `/resources/v3alpha/projects/${ids.project}/grants/${ids.grant}`));
    expect(grant.grant).toMatchObject({ grantedOrganizationId: ids.partner, roleKeys: ["r1"] });
    expect((await ok(call(b, "GET", `/resources/v3alpha/user_grants/${ids.userGrant}`))).grant.grant.roleKeys).toEqual(["r1"]);
    await ok(call(b, "GET", `/resources/v3alpha/memberships/project_grant:${ids.grant}:${ids.partnerUser}`));

    const again = await ok(call(b, "POST", "/admin/v1/import", { timeout: "1m", dataOrgs: exported }));
    expect(again.errors ?? []).toEqual([]);
    expect(await b.server.db.prisma.event.count({ where: { aggregateId: ids.grant } })).toBe(1);
  });
});
