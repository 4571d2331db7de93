import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { humanAdded } from "../../src/events/index.js";
import { newId } from "../../src/ids.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * Export and import as jobs (PortabilityService): started, watched, their data read; the same data as the
 * synchronous /admin/v1/export, and an import that places it in another server.
 */
let a: TestServer;
let b: TestServer;
let orgId: string;
beforeAll(async () => {
  [a, b] = await Promise.all([startTestServer(), startTestServer()]);
  orgId = await a.org("Jobs Org");
  for (const name of ["jill", "jack", "joan"]) {
    const r = await rest(a.url, "POST", `/resources/v3alpha/users?ctx.orgId=${orgId}`, {
      token: a.adminPat,
      body: { username: name, human: { profile: { givenName: name, familyName: "Job" }, email: { address: `${name}@example.com`, isVerified: true } } },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
  // a human without an address, as the first instance's admin is (the API makes none such)
  await a.server.es.execute((w) =>
    w.push(a.instanceId, "test", [humanAdded.event({ aggregateId: newId(), resourceOwner: orgId }, { username: "noaddress", displayName: "No Address" })]),
  );
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

const api = (t: TestServer, method: string, path: string, body?: unknown, token = t.adminPat) =>
  rest(t.url, method, `/resources/v3alpha/portability${path}`, { token, ...(body !== undefined ? { body } : {}) });

/** The job once it is no longer running. */
async function finished(t: TestServer, id: string) {
  for (let i = 0; i < 200; i++) {
    const r = await api(t, "GET", `/jobs/${id}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    if (r.body.job.state !== "PORTABILITY_JOB_STATE_RUNNING") return r.body.job;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`job ${id} still running`);
}

describe("export and import jobs", () => {
  let exported: string;

  it("an export runs in the background, reports its progress, and its data is the synchronous export's", async () => {
    const started = await api(a, "POST", "/exports", { orgIds: [orgId], withPasswords: true });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    expect(started.body.job).toMatchObject({ kind: "PORTABILITY_JOB_KIND_EXPORT", state: "PORTABILITY_JOB_STATE_RUNNING" });
    const job = await finished(a, started.body.job.id);
    expect(job).toMatchObject({ state: "PORTABILITY_JOB_STATE_DONE", done: 1, total: 1 });
    expect(Number(job.objects)).toBeGreaterThanOrEqual(3);
    const data = await api(a, "GET", `/jobs/${job.id}/data`);
    expect(data.status).toBe(200);
    exported = data.body.dataJson;
    expect(Number(job.dataSize)).toBe(Buffer.byteLength(exported));
    const sync = await rest(a.url, "POST", "/admin/v1/export", { token: a.adminPat, body: { org_ids: [orgId], with_passwords: true, response_output: true } });
    expect(JSON.parse(exported)).toEqual(sync.body);
    // at rest the data is sealed with the master key: no username in clear
    const row = await a.server.db.prisma.portabilityJob.findUniqueOrThrow({ where: { id: job.id } });
    expect(row.data).not.toContain("jill");
  });

  it("an import places the export in another server, and the same import again creates nothing twice", async () => {
    const started = await api(b, "POST", "/imports", { dataJson: exported });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const job = await finished(b, started.body.job.id);
    expect(job).toMatchObject({ kind: "PORTABILITY_JOB_KIND_IMPORT", state: "PORTABILITY_JOB_STATE_DONE", done: 1, total: 1 });
    expect(job.issues ?? []).toEqual([]);
    expect(Number(job.objects)).toBeGreaterThanOrEqual(4);
    expect(await b.server.db.prisma.user.count({ where: { orgId, username: { in: ["jill", "jack", "joan"] } } })).toBe(3);
    // the human without an address comes back without one (and is sent no mail)
    expect((await b.server.db.prisma.user.findFirstOrThrow({ where: { orgId, username: "noaddress" } })).email).toBeNull();
    const again = await finished(b, (await api(b, "POST", "/imports", { dataJson: exported })).body.job.id);
    expect(again.state).toBe("PORTABILITY_JOB_STATE_DONE");
    expect(await b.server.db.prisma.user.count({ where: { orgId } })).toBe(4);
    // an import has no data to read
    expect((await api(b, "GET", `/jobs/${job.id}/data`)).status).toBe(400);
    const list = await api(b, "GET", "/jobs");
    expect(list.body.result.map((j: { id: string }) => j.id)).toEqual([again.id, job.id]);
  });

  it("refuses data that is no export before a job starts, naming the field", async () => {
    for (const dataJson of ["not json", '{"users": []}']) {
      const r = await api(b, "POST", "/imports", { dataJson });
      expect(r.status).toBe(400);
      expect(r.body.message).toContain("invalid data_json");
    }
  });

  it("a job whose process stopped reads as interrupted; one older than a day is gone", async () => {
    const db = a.server.db.prisma;
    const old = (ms: number) => new Date(Date.now() - ms);
    const base = { instanceId: a.instanceId, kind: "import", creator: "x", issues: [] };
    await db.portabilityJob.create({ data: { ...base, id: "stalled-job", state: "running", createdAt: old(60_000), changeDate: old(45_000) } });
    await db.portabilityJob.create({ data: { ...base, id: "old-job", state: "done", createdAt: old(25 * 3_600_000), changeDate: old(25 * 3_600_000) } });
    expect((await api(a, "GET", "/jobs/stalled-job")).body.job.state).toBe("PORTABILITY_JOB_STATE_INTERRUPTED");
    expect((await api(a, "GET", "/jobs/old-job")).status).toBe(404);
    // and is removed when the next job starts
    await finished(a, (await api(a, "POST", "/exports", { orgIds: [orgId] })).body.job.id);
    expect(await db.portabilityJob.count({ where: { id: "old-job" } })).toBe(0);
  });

  it("needs iam.export or iam.import: others start none and read none", async () => {
    const owner = await a.serviceUser("jobs-owner", [{ type: "org", id: orgId, roles: ["ORG_OWNER"] }], orgId);
    expect((await api(a, "POST", "/exports", { orgIds: [orgId] }, owner.token)).status).toBe(403);
    expect((await api(a, "POST", "/imports", { dataJson: exported }, owner.token)).status).toBe(403);
    expect((await api(a, "GET", "/jobs", undefined, owner.token)).body.result ?? []).toEqual([]);
    const some = (await api(a, "GET", "/jobs")).body.result[0].id;
    expect((await api(a, "GET", `/jobs/${some}`, undefined, owner.token)).status).toBe(403);
    // another instance's job is not found
    expect((await api(b, "GET", `/jobs/${some}`)).status).toBe(404);
  });
});
