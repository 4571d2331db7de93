import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { orgOwner, post } from "../portability/helpers.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * The older JSON-only routes (export, import, user import) are authorised as every RPC is
 * (src/authz/blocked.ts): a blocked instance answers them RESOURCE_EXHAUSTED (HTTP 429) with the status object
 * before anything is read or written, and serves them again once unblocked.
 */
let t: TestServer;
let orgId: string;
let owner: string;
beforeAll(async () => {
  t = await startTestServer();
  orgId = await t.org("Blocked imports");
  owner = await orgOwner(t, orgId, "blocked-import-owner");
});
afterAll(() => t?.close());

// The system API's limits (never blocked itself, so the same Host unblocks).
const limit = (limits: unknown) => rest(t.url, "POST", `/resources/v3alpha/instances/${t.instanceId}/_limit`, { token: t.adminPat, body: { limits } });

const exportAll = () => post(t, "/admin/v1/export", { response_output: true });
const importOrg = () => post(t, "/admin/v1/import", { data_orgs: { orgs: [{ orgId: "910001", org: { name: "Imported while blocked" } }] }, timeout: "1m" });
const importUser = () =>
  post(
    t,
    "/management/v1/users/human/_import",
    { userName: "blocked-ada", profile: { firstName: "Ada", lastName: "Lovelace" }, email: { email: "blocked-ada@example.com", isEmailVerified: true } },
    owner,
    { "x-svc-orgid": orgId },
  );

describe("a blocked instance's export and import", () => {
  it("answer 429 RESOURCE_EXHAUSTED with the status object, write nothing, and work again when unblocked", async () => {
    expect((await limit({ block: true })).status).toBe(200);
    try {
      for (const [name, send] of [
        ["export", exportAll],
        ["import", importOrg],
        ["user import", importUser],
      ] as const) {
        const r = await send();
        expect(r.status, `${name}: ${JSON.stringify(r.body)}`).toBe(429);
        expect(r.headers["content-type"]).toContain("application/json");
        expect(r.body).toMatchObject({
          code: Code.ResourceExhausted,
          message: "the instance is blocked (LIMIT-bl0k)",
          details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "LIMIT-bl0k", domain: "svc-iam" }],
        });
      }
      // The tokens were good: the same calls by a stranger are still refused as unauthenticated, not as blocked.
      expect((await post(t, "/admin/v1/export", { response_output: true }, "")).status).toBe(401);
      expect(await t.server.db.prisma.org.count({ where: { id: "910001" } })).toBe(0);
      expect(await t.server.db.prisma.user.count({ where: { username: "blocked-ada" } })).toBe(0);
    } finally {
      expect((await limit({ block: false })).status).toBe(200);
    }

    const exported = await exportAll();
    expect(exported.status, JSON.stringify(exported.body)).toBe(200);
    expect(exported.body.orgs.length).toBeGreaterThan(0);
    const imported = await importOrg();
    expect(imported.status, JSON.stringify(imported.body)).toBe(200);
    expect(await t.server.db.prisma.org.count({ where: { id: "910001" } })).toBe(1);
    const user = await importUser();
    expect(user.status, JSON.stringify(user.body)).toBe(200);
    expect(user.body.userId).toMatch(/^\d+$/);
  });
});
