import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  LanguageSettingsService,
  ResolveLanguageSettingsRequestSchema,
  SetLanguageSettingsRequestSchema,
} from "../../gen/svc/settings/language/v3alpha/language_service_pb.js";
import { call, protocols, rest } from "../support/clients.js";
import { TEST_MASTERKEY } from "../support/database.js";
import { connectionsToTwoWorkers, sample, until } from "../support/machine.js";
import { type PrivatePostgres, startPrivatePostgres, startReplica, ownPostgresRunsHere } from "../support/private-postgres.js";
import { killServerProcess, startServerProcess, type ServerProcess } from "../support/process.js";

/**
 * Read replicas (issue 32, point 1): a primary and a streaming replica of it (Debian's PostgreSQL, made here with
 * pg_basebackup), and the server in two worker processes with SVC_DATABASE_REPLICA_URLS. Read-your-writes is made
 * visible by pausing replay on the replica: a read that went there would miss what was just written.
 */
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

let primary: PrivatePostgres;
let replica: PrivatePostgres;
let server: ServerProcess;
let token: string;

beforeAll(async () => {
  if (!ownPostgresRunsHere) return;
  primary = await startPrivatePostgres();
  cleanups.push(() => primary.remove());
  replica = await startReplica(primary);
  cleanups.push(() => replica.remove());
  const dir = mkdtempSync(join(tmpdir(), "svc-replicas-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  server = await startServerProcess(
    {
      SVC_DATA_DIR: dir,
      SVC_WORKERS: "2",
      DATABASE_URL: primary.url,
      SVC_MASTERKEY: TEST_MASTERKEY,
      SVC_DATABASE_REPLICA_URLS: replica.url,
    },
    150_000,
  );
  cleanups.push(() => killServerProcess(server));
  token = readFileSync(join(dir, "admin.pat"), "utf8").trim();
}, 180_000);

/** Reads counted by `svc_db_reads_total` over both workers: served by `node`, for the primary also why. */
async function reads(node: string, reason?: string): Promise<number> {
  const text = (await rest(server.url, "GET", "/metrics")).body as string;
  const labels = `(?=[^}]*node="${node}")${reason ? `(?=[^}]*reason="${reason}")` : ""}`;
  return sample(text, new RegExp(`^svc_db_reads_total\\{${labels}`));
}

const searchOrgs = () => rest(server.url, "POST", "/resources/v3alpha/organizations/_search", { token, body: {} });

describe.skipIf(!ownPostgresRunsHere)("a server with a read replica", () => {
  it("names the replica in /readyz and serves searches from it", async () => {
    const ready = await until("the replica up in /readyz", async () => {
      const r = await rest(server.url, "GET", "/readyz");
      return r.body?.replicas?.[0]?.up ? r : undefined;
    });
    expect(ready.status).toBe(200);
    expect(ready.body.replicas[0]).toMatchObject({ name: "replica-1", up: true, usable: true });
    const before = await reads("replica-1");
    for (let i = 0; i < 10; i++) expect((await searchOrgs()).status).toBe(200);
    expect(await reads("replica-1")).toBeGreaterThanOrEqual(before + 10);
  });

  it("reads what a caller wrote at once, through the other worker and over every protocol, while the replica does not have it", async () => {
    const { a, b } = await connectionsToTwoWorkers(server.url, (f) => cleanups.push(f));
    await replica.pauseReplay();
    try {
      const behindBefore = await reads("primary", "behind");
      // an organisation created through one worker, read and found by a search through the other
      const created = await rest(server.url, "POST", "/resources/v3alpha/organizations", { token, agent: a.agent, body: { name: "written-while-paused" } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const id = created.body.details.id as string;
      const got = await rest(server.url, "GET", `/resources/v3alpha/organizations/${id}`, { token, agent: b.agent });
      expect(got.status, JSON.stringify(got.body)).toBe(200);
      expect(got.body.organization.name).toBe("written-while-paused");
      const found = await rest(server.url, "POST", "/resources/v3alpha/organizations/_search", {
        token,
        agent: b.agent,
        body: { filters: [{ name: { name: "written-while-paused" } }] },
      });
      expect(found.status, JSON.stringify(found.body)).toBe(200);
      expect(found.body.result.map((o: { details: { id: string } }) => o.details.id)).toEqual([id]);
      // cached settings: the reader's entry is dropped by the write and loaded again from a node that has it
      for (const [i, key] of ["de", "fr", "it"].entries()) {
        expect((await rest(server.url, "GET", "/settings/v3alpha/languages", { token, agent: b.agent })).status).toBe(200);
        const set = await rest(server.url, "PATCH", "/settings/v3alpha/languages", { token, agent: a.agent, body: { defaultLanguage: { key } } });
        expect(set.status, `round ${i}: ${JSON.stringify(set.body)}`).toBe(200);
        const read = await rest(server.url, "GET", "/settings/v3alpha/languages", { token, agent: b.agent });
        expect(read.body.settings?.defaultLanguage?.value, `round ${i}`).toBe(key);
      }
      for (const [i, protocol] of protocols.entries()) {
        const key = ["es", "pt", "ja", "pl"][i]!;
        const setReq = create(SetLanguageSettingsRequestSchema, { settings: { defaultLanguage: { key } } });
        await call(protocol, server.url, LanguageSettingsService, LanguageSettingsService.method.setLanguages, setReq, { token });
        const resolveReq = create(ResolveLanguageSettingsRequestSchema, {});
        const got = await call(protocol, server.url, LanguageSettingsService, LanguageSettingsService.method.resolveLanguages, resolveReq, { token });
        expect(got.settings?.defaultLanguage?.value, protocol).toBe(key);
      }
      // the replica really did not have them: those reads were the primary's
      expect(await replica.query("SELECT id FROM orgs WHERE id = $1", [id])).toEqual([]);
      expect(await reads("primary", "behind")).toBeGreaterThan(behindBefore);
    } finally {
      await replica.resumeReplay();
    }
    // caught up again, the replica serves the reads once more
    const before = await reads("replica-1");
    await until("reads on the replica again", async () => ((await searchOrgs()).status === 200 && (await reads("replica-1")) > before) || undefined, 10_000);
  });

  it("skips a replica that is down without an error to the caller, and uses it again once it is back", async () => {
    // stopped under load: the searches in flight on it when its sessions end are answered by the primary
    const statuses: number[] = [];
    let reading = true;
    const readers = Array.from({ length: 4 }, async () => {
      while (reading) statuses.push((await searchOrgs()).status);
    });
    await until("searches under way", () => statuses.length >= 20 || undefined);
    replica.stop();
    try {
      await until("searches after the stop", () => statuses.length >= 60 || undefined);
      reading = false;
      await Promise.all(readers);
      expect(statuses.filter((status) => status !== 200)).toEqual([]);
      await until("the replica reported down", async () => {
        const r = await rest(server.url, "GET", "/readyz");
        return r.status === 200 && r.body.replicas[0].up === false ? r : undefined;
      });
      const primaryBefore = await reads("primary", "no_replica");
      for (let i = 0; i < 5; i++) expect((await searchOrgs()).status).toBe(200);
      expect(await reads("primary", "no_replica")).toBeGreaterThanOrEqual(primaryBefore + 5);
    } finally {
      replica.start();
    }
    await until("the replica up again", async () => (await rest(server.url, "GET", "/readyz")).body.replicas[0].up || undefined);
    const before = await reads("replica-1");
    for (let i = 0; i < 5; i++) expect((await searchOrgs()).status).toBe(200);
    expect(await reads("replica-1")).toBeGreaterThanOrEqual(before + 5);
  });

  it("reports the replica's lag in /metrics", async () => {
    const text = (await rest(server.url, "GET", "/metrics")).body as string;
    expect(text).toMatch(/^svc_db_replica_up\{[^}]*replica="replica-1"[^}]*\} 1$/m);
    expect(text).toMatch(/^svc_db_replica_lag_seconds\{[^}]*replica="replica-1"/m);
  });
});
