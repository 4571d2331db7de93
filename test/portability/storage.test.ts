import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GcsTestServer } from "../support/gcs.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { post } from "./helpers.js";

/**
 * Export outputs and import inputs: a local file under SVC_EXPORT_DIR (never outside it), S3 against s3rver
 * (a real S3 API server from npm) and GCS through STORAGE_EMULATOR_HOST against test/support/gcs.ts, the
 * GCS JSON-API test server (no GCS emulator exists on npm). Credentials never reach the log or the events.
 */
const S3rver = createRequire(import.meta.url)("s3rver");
let a: TestServer;
let b: TestServer;
let s3: { close(): Promise<void>; address: string; port: number };
let gcs: GcsTestServer;
let orgId: string;
const exportDir = mkdtempSync(join(tmpdir(), "svc-exports-"));
const s3Dir = mkdtempSync(join(tmpdir(), "s3rver-"));
const serviceAccount = Buffer.from(
  JSON.stringify({
    type: "service_account",
    project_id: "p",
    client_email: "x@p.iam.gserviceaccount.com",
    private_key: "-----BEGIN PRIVATE KEY-----\nMII\n-----END PRIVATE KEY-----\n",
  }),
).toString("base64");
const s3Location = () => ({ endpoint: `127.0.0.1:${s3.port}`, access_key_id: "S3RVER", secret_access_key: "S3RVER", ssl: false, bucket: "exports" });

beforeAll(async () => {
  const server = new S3rver({
    port: 0,
    address: "127.0.0.1",
    silent: true,
    directory: s3Dir,
    configureBuckets: [{ name: "exports" }],
  });
  const address = await server.run();
  s3 = { close: () => server.close(), address: address.address, port: address.port };
  gcs = await new GcsTestServer(["exports"]).start();
  process.env.STORAGE_EMULATOR_HOST = gcs.url;
  // s3rver is on loopback; the metadata address stays denied (the default denies both: test/security/outbound-default.test.ts)
  const env = { SVC_EXPORT_DIR: exportDir, SVC_TARGET_DENY: "link-local,unspecified" };
  [a, b] = await Promise.all([startTestServer(env), startTestServer(env)]);
  orgId = await a.org("Stored");
  await post(
    a,
    "/management/v1/users/human/_import",
    { userName: "stored", profile: { firstName: "S", lastName: "T" }, email: { email: "s@example.com", isEmailVerified: true } },
    a.adminPat,
    {
      "x-svc-orgid": orgId,
    },
  );
});
afterAll(async () => {
  delete process.env.STORAGE_EMULATOR_HOST;
  await a?.close();
  await b?.close();
  await s3?.close();
  await gcs?.stop();
  for (const d of [exportDir, s3Dir]) rmSync(d, { recursive: true, force: true });
});

const exportTo = (output: Record<string, unknown>) => post(a, "/admin/v1/export", { org_ids: [orgId], with_passwords: true, timeout: "1m", ...output });
const importedOrg = (t: TestServer) => t.server.db.prisma.org.findUnique({ where: { id: orgId } });

describe("export and import through files and object storage", () => {
  it("local: writes under SVC_EXPORT_DIR/<instance ID>, imports from there; '..' and absolute paths out of it are refused", async () => {
    const r = await exportTo({ local_output: { path: "nightly/export.json" } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({});
    const written = JSON.parse(readFileSync(join(exportDir, a.instanceId, "nightly/export.json"), "utf8"));
    expect(written.orgs[0].orgId).toBe(orgId);
    for (const path of ["../escape.json", "nightly/../../escape.json", "/etc/passwd", ""]) {
      const bad = await exportTo({ local_output: { path } });
      expect(bad.status, path).toBe(400);
      expect(bad.body.message).toContain("local_output.path");
    }
    expect(existsSync(join(exportDir, "..", "escape.json"))).toBe(false);
    const outside = await post(b, "/admin/v1/import", { data_orgs_local: { path: "../etc/passwd" }, timeout: "1m" });
    expect(outside.status).toBe(400);
    expect(outside.body.message).toContain("data_orgs_local.path");
    const missing = await post(b, "/admin/v1/import", { data_orgs_local: { path: "nope.json" }, timeout: "1m" });
    expect(missing.status).toBe(404);
    mkdirSync(join(exportDir, b.instanceId, "broken"), { recursive: true });
    writeFileSync(join(exportDir, b.instanceId, "broken/x.json"), "{not json");
    const broken = await post(b, "/admin/v1/import", { data_orgsv1_local: { path: "broken/x.json" }, timeout: "1m" });
    expect(broken.status).toBe(400);
    // Each instance reads its own directory only: the operator moves a backup from one to the other.
    expect((await post(b, "/admin/v1/import", { data_orgs_local: { path: "nightly/export.json" }, timeout: "1m" })).status).toBe(404);
    cpSync(join(exportDir, a.instanceId, "nightly"), join(exportDir, b.instanceId, "nightly"), { recursive: true });
    const imported = await post(b, "/admin/v1/import", { data_orgs_local: { path: "nightly/export.json" }, timeout: "1m" });
    expect(imported.status, JSON.stringify(imported.body)).toBe(200);
    expect(imported.body.errors).toEqual([]);
    expect(await importedOrg(b)).toMatchObject({ name: "Stored" });
  });

  it("S3: exports to s3rver and imports from it", async () => {
    const r = await exportTo({ s3_output: { ...s3Location(), path: "s3/export.json" } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const imported = await post(b, "/admin/v1/import", { data_orgs_s3: { ...s3Location(), path: "s3/export.json" }, timeout: "1m" });
    expect(imported.status, JSON.stringify(imported.body)).toBe(200);
    expect(imported.body.success.orgs[0].humanUserIds).toHaveLength(1);
    // s3rver checks the access key ID (its secrets are fixed); the answer names neither.
    const wrongKey = await exportTo({ s3_output: { ...s3Location(), access_key_id: "NOBODY", secret_access_key: "wrong-secret", path: "s3/x.json" } });
    expect(wrongKey.status).toBe(400);
    expect(wrongKey.body.message).toContain("s3 storage refused");
    expect(wrongKey.body.message).not.toMatch(/wrong-secret|NOBODY/);
    const noBucket = await exportTo({ s3_output: { ...s3Location(), bucket: "" } });
    expect(noBucket.status).toBe(400);
    expect(noBucket.body.message).toContain("s3_output.bucket");
  });

  it("S3: the endpoint obeys SVC_TARGET_DENY, written as an address or reached through a name", async () => {
    const metadata = await exportTo({ s3_output: { ...s3Location(), endpoint: "169.254.169.254:80", path: "x.json" } });
    expect(metadata.status).toBe(400);
    expect(metadata.body.message).toContain("s3_output.endpoint");
    const hex = await post(b, "/admin/v1/import", { data_orgs_s3: { ...s3Location(), endpoint: "http://0xa9.254.169.254/", path: "x.json" }, timeout: "1m" });
    expect(hex.status).toBe(400);
    expect(hex.body.message).toContain("data_orgs_s3.endpoint");
    // A server that denies loopback: "localhost" resolves to it, and the connection is refused after DNS.
    const strict = await startTestServer({ SVC_EXPORT_DIR: exportDir, SVC_TARGET_DENY: "loopback,link-local" });
    try {
      const viaName = await post(strict, "/admin/v1/import", {
        data_orgs_s3: { ...s3Location(), endpoint: `localhost:${s3.port}`, path: "s3/export.json" },
        timeout: "1m",
      });
      expect(viaName.status).toBe(400);
      expect(viaName.body.message).toMatch(/s3 storage endpoint resolves to [0-9a-f:.]+, which is denied by SVC_TARGET_DENY \(loopback\)/);
    } finally {
      await strict.close();
    }
  });

  it("GCS: exports through STORAGE_EMULATOR_HOST and imports from it", async () => {
    const r = await exportTo({ gcs_output: { bucket: "exports", path: "gcs/export.json", serviceaccount_json: serviceAccount } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(JSON.parse(gcs.objects.get("exports/gcs/export.json")!.toString()).orgs[0].orgId).toBe(orgId);
    const imported = await post(b, "/admin/v1/import", {
      data_orgsv1_gcs: { bucket: "exports", path: "gcs/export.json", serviceaccount_json: serviceAccount },
      timeout: "1m",
    });
    expect(imported.status, JSON.stringify(imported.body)).toBe(200);
    expect(imported.body.errors).toEqual([]);
    // Only a service account's key: an "external_account" would have the server fetch the URL it names.
    const external = Buffer.from(
      JSON.stringify({ type: "external_account", audience: "x", credential_source: { url: "http://169.254.169.254/computeMetadata/v1/" } }),
    ).toString("base64");
    const refused = await exportTo({ gcs_output: { bucket: "exports", path: "x.json", serviceaccount_json: external } });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain("gcs_output.serviceaccount_json");
    const noBucket = await exportTo({ gcs_output: { bucket: "missing", path: "x.json", serviceaccount_json: serviceAccount } });
    expect(noBucket.status).toBe(400);
    const badAccount = await exportTo({ gcs_output: { bucket: "exports", path: "x.json", serviceaccount_json: "bm90IGpzb24=" } });
    expect(badAccount.status).toBe(400);
    expect(badAccount.body.message).toContain("gcs_output.serviceaccount_json");
  });

  it("a timeout that runs out leaves no file behind: DEADLINE_EXCEEDED", async () => {
    const r = await exportTo({ local_output: { path: "late.json" }, timeout: "1ns" });
    expect(r.status).toBe(504);
    expect(r.body.code).toBe(4);
    expect(existsSync(join(exportDir, a.instanceId, "late.json"))).toBe(false);
    expect(existsSync(join(exportDir, a.instanceId, "late.json.partial"))).toBe(false);
  });

  it("refuses two outputs at once, and credentials never reach the events", async () => {
    const both = await exportTo({ local_output: { path: "a.json" }, gcs_output: { bucket: "exports", path: "a.json", serviceaccount_json: serviceAccount } });
    expect(both.status).toBe(400);
    const events = await a.server.db.prisma.event.findMany({ select: { payload: true } });
    const all = JSON.stringify(events);
    expect(all).not.toContain("S3RVER");
    expect(all).not.toContain(serviceAccount);
  });
});
