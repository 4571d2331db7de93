import { dirname } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeInstance } from "../../src/command/instances.js";
import { runCli } from "../support/cli.js";
import { rest } from "../support/clients.js";
import { TEST_MASTERKEY } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * Security review #23: `recover` without `--instance` took the oldest instance there is. The first instance is the
 * one the first start made (its creation event's creator is SYSTEM, docs/decisions.md); once it was deleted, or when
 * a tenant's instance is older (a process with its clock behind made it), the recovery gave a tenant's user new
 * credentials. A tenant here has a service user of the same login name as the first instance's.
 */

let t: TestServer;
let env: Record<string, string>;
let tenantId: string;

/** The service user `admin-service` of an instance. */
const serviceUser = (instanceId: string) => t.server.db.prisma.user.findFirstOrThrow({ where: { instanceId, loginName: "admin-service" } });
const patsOf = async (instanceId: string) => t.server.db.prisma.personalAccessToken.count({ where: { userId: (await serviceUser(instanceId)).id } });

beforeAll(async () => {
  t = await startTestServer();
  const url = (t.server.db.connection as { connectionString?: string }).connectionString;
  env = { SVC_DATA_DIR: dirname(t.server.firstInstance.passwordFile!), ...(url ? { DATABASE_URL: url, SVC_MASTERKEY: TEST_MASTERKEY } : {}) };
  const made = await rest(t.url, "POST", "/resources/v3alpha/instances", {
    token: t.adminPat,
    body: { name: "Tenant", domains: ["tenant.test"], firstOrgName: "Tenant Org", machine: { username: "admin-service", name: "Tenant ops" } },
  });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  tenantId = made.body.details.id;
});
afterAll(() => t?.close());

// Each test runs the command in a new process (tsx compiles it at each start): slow on a busy machine.
describe("recover without --instance acts on the first instance only (review #23)", () => {
  it("targets the first instance when a tenant's instance is the oldest", async () => {
    // As written by a process whose clock is an hour behind.
    await t.server.db.prisma.instance.update({ where: { id: tenantId }, data: { createdAt: new Date(Date.now() - 3_600_000) } });
    const tenantPats = await patsOf(tenantId);
    const r = await runCli(["recover", "--user", "admin-service"], env, 60_000);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`of instance ${t.instanceId}`);
    expect((await rest(t.url, "GET", "/settings/v3alpha/languages", { token: r.stdout.trim() })).status).toBe(200);
    expect(await patsOf(tenantId)).toBe(tenantPats);
  }, 180_000);

  it("refuses, naming --instance, once the first instance is deleted, and leaves the tenant's users alone", async () => {
    await removeInstance(t.server.es, { instanceId: t.instanceId, creator: "test" });
    const tenantPats = await patsOf(tenantId);
    const r = await runCli(["recover", "--user", "admin-service"], env, 60_000);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/first instance .*deleted.*--instance/);
    expect(await patsOf(tenantId)).toBe(tenantPats);
    // Named, the tenant's instance is recovered.
    const named = await runCli(["recover", "--user", "admin-service", "--instance", tenantId], env, 60_000);
    expect(named.code, named.stderr).toBe(0);
    expect(named.stderr).toContain(`of instance ${tenantId}`);
    expect(await patsOf(tenantId)).toBe(tenantPats + 1);
  }, 180_000);
});
