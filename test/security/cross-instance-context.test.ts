import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * Security review, finding 7: any authenticated principal of instance A read instance B's settings by naming B
 * in `ctx.instance_id` / `ctx.instance_domain`. Another instance than the Host's is now NOT_FOUND to all but the
 * system's members.
 */
describe("a request context naming another instance", () => {
  let t: TestServer;
  let second: string;
  let plainPat: string;
  beforeAll(async () => {
    t = await startTestServer();
    const made = await rest(t.url, "POST", "/resources/v3alpha/instances", {
      token: t.adminPat,
      body: { name: "Tenant B", domains: ["tenantb.test"], firstOrgName: "B", machine: { username: "ops", name: "Ops" } },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    second = made.body.details.id;
    const b = { token: made.body.pat as string, host: `tenantb.test:${t.port}` };
    const set = await rest(t.url, "PATCH", "/settings/v3alpha/login", {
      ...b,
      body: { customLoginUrl: { set: "https://login.tenant-b.example/secret-path" } },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    // a plain machine user of instance A, without any membership
    plainPat = (await t.serviceUser("nobody")).token;
  });
  afterAll(() => t?.close());

  for (const [name, query] of [
    ["ctx.instance_id", () => `ctx.instance_id=${second}`],
    ["ctx.instance_domain", () => "ctx.instance_domain=tenantb.test"],
    ["ctx.instanceId", () => `ctx.instanceId=${second}`],
  ] as const) {
    it(`refuses ${name} of another instance to an instance user, as if it did not exist`, async () => {
      for (const path of ["/settings/v3alpha/login", "/settings/v3alpha/security", "/settings/v3alpha/languages"]) {
        const r = await rest(t.url, "GET", `${path}?${query()}`, { token: plainPat });
        expect(r.status, `${path} ${JSON.stringify(r.body)}`).toBe(404);
        expect(JSON.stringify(r.body)).not.toContain("secret-path");
      }
    });
  }

  it("the JSON-only routes (export, import, user import) bind a token to its instance as the RPCs do", async () => {
    // the review's informational point: their authentication lacked the check; an instance user's PAT at B's Host
    const ownerA = (await t.serviceUser("owner-a", [{ type: "instance", id: t.instanceId, roles: ["IAM_OWNER"] }])).token;
    const host = `tenantb.test:${t.port}`;
    for (const path of ["/admin/v1/export", "/admin/v1/import", "/management/v1/users/human/_import"]) {
      const r = await rest(t.url, "POST", path, { token: ownerA, host, body: { responseOutput: true } });
      expect(r.status, `${path} ${JSON.stringify(r.body)}`).toBe(401);
    }
  });

  it("still serves the Host's own instance named explicitly, and the other instance to a system member", async () => {
    expect((await rest(t.url, "GET", `/settings/v3alpha/login?ctx.instance_id=${t.instanceId}`, { token: plainPat })).status).toBe(200);
    const bySystem = await rest(t.url, "GET", `/settings/v3alpha/login?ctx.instance_id=${second}`, { token: t.adminPat });
    expect(bySystem.status).toBe(200);
    expect(bySystem.body.settings.customLoginUrl.value).toBe("https://login.tenant-b.example/secret-path");
  });
});
