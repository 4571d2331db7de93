import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * Security review #17: every instance's local exports and imports resolved in the one SVC_EXPORT_DIR, so a tenant's
 * IAM_OWNER read and overwrote another instance's backup (password hashes, TOTP secrets), and the files were
 * world-readable (0644 under the usual umask). Each instance now has its own directory, `<dir>/<instance ID>/`,
 * of mode 0700, and its files are 0600 whatever the umask.
 */

let t: TestServer;
let tenantHost: string;
let tenantPat: string;
let tenantId: string;
const exportDir = mkdtempSync(join(tmpdir(), "svc-exports-"));
let umask: number;

const post = (path: string, body: unknown, auth: { host?: string; token?: string } = {}) =>
  rest(t.url, "POST", path, { token: auth.token ?? t.adminPat, body: { timeout: "1m", ...(body as object) }, ...(auth.host ? { host: auth.host } : {}) });
const asTenant = () => ({ host: tenantHost, token: tenantPat });

beforeAll(async () => {
  // The widest umask: modes must come from the server, not from the process's umask.
  umask = process.umask(0);
  t = await startTestServer({ SVC_EXPORT_DIR: exportDir });
  await t.org("Backed up");
  const made = await rest(t.url, "POST", "/resources/v3alpha/instances", {
    token: t.adminPat,
    body: { name: "Tenant B", domains: ["tenantb.test"], firstOrgName: "B Org", machine: { username: "b-ops", name: "B Ops" } },
  });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  tenantId = made.body.details.id;
  tenantPat = made.body.pat;
  tenantHost = `tenantb.test:${t.port}`;
});
afterAll(async () => {
  process.umask(umask);
  await t?.close();
  rmSync(exportDir, { recursive: true, force: true });
});

describe("local exports and imports are per instance (review #17)", () => {
  it("writes an instance's export into its own directory, 0700, as a file of mode 0600", async () => {
    const r = await post("/admin/v1/export", { with_passwords: true, with_otp: true, local_output: { path: "backup.json" } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const file = join(exportDir, t.instanceId, "backup.json");
    expect(JSON.parse(readFileSync(file, "utf8")).orgs.map((o: { org: { name: string } }) => o.org.name)).toContain("Backed up");
    expect(existsSync(join(exportDir, "backup.json"))).toBe(false);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(exportDir, t.instanceId)).mode & 0o777).toBe(0o700);
    // A nested path: every directory made on the way is 0700 too.
    expect((await post("/admin/v1/export", { local_output: { path: "nightly/2024/backup.json" } })).status).toBe(200);
    for (const dir of ["nightly", "nightly/2024"]) expect(statSync(join(exportDir, t.instanceId, dir)).mode & 0o777, dir).toBe(0o700);
    expect(statSync(join(exportDir, t.instanceId, "nightly/2024/backup.json")).mode & 0o777).toBe(0o600);
  });

  it("another instance's IAM_OWNER neither reads nor overwrites it under the same name", async () => {
    const file = join(exportDir, t.instanceId, "backup.json");
    const before = readFileSync(file, "utf8");
    const imported = await post("/admin/v1/import", { data_orgs_local: { path: "backup.json" } }, asTenant());
    expect(imported.status, JSON.stringify(imported.body)).toBe(404);
    expect(JSON.stringify(imported.body)).not.toContain(t.defaultOrgId);
    const around = await post("/admin/v1/import", { data_orgs_local: { path: `../${t.instanceId}/backup.json` } }, asTenant());
    expect(around.status, JSON.stringify(around.body)).toBe(400);

    const exported = await post("/admin/v1/export", { local_output: { path: "backup.json" } }, asTenant());
    expect(exported.status, JSON.stringify(exported.body)).toBe(200);
    expect(readFileSync(file, "utf8")).toBe(before);
    const theirs = join(exportDir, tenantId, "backup.json");
    expect(JSON.parse(readFileSync(theirs, "utf8")).orgs.map((o: { org: { name: string } }) => o.org.name)).toEqual(["B Org"]);
    expect(statSync(theirs).mode & 0o777).toBe(0o600);
    // Its own file it imports again (the organisation exists: reported, not a failure of the call).
    expect((await post("/admin/v1/import", { data_orgs_local: { path: "backup.json" } }, asTenant())).status).toBe(200);
  });
});
