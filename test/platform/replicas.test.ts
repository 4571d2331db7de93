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
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { CreateOrganizationRequestSchema, GetOrganizationRequestSchema, OrganizationService } from "../../gen/svc/resources/org/v3alpha/org_service_pb.js";
import { call, protocols, rest } from "../support/clients.js";
import { startTcpProxy } from "../support/tcp-proxy.js";
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
async function reads(node: string, reason?: string, url = server.url): Promise<number> {
  const text = (await rest(url, "GET", "/metrics")).body as string;
  const labels = `(?=[^}]*node="${node}")${reason ? `(?=[^}]*reason="${reason}")` : ""}`;
  return sample(text, new RegExp(`^svc_db_reads_total\\{${labels}`));
}

const searchOrgs = () => rest(server.url, "POST", "/resources/v3alpha/organizations/_search", { token, body: {} });

/** Four clients searching back to back until `stop`; every answer's status is kept. */
async function searchesUnderWay(): Promise<{ statuses: number[]; stop: () => Promise<void> }> {
  const statuses: number[] = [];
  let reading = true;
  const readers = Array.from({ length: 4 }, async () => {
    while (reading) statuses.push((await searchOrgs()).status);
  });
  await until("searches under way", () => statuses.length >= 20 || undefined);
  return {
    statuses,
    stop: async () => {
      reading = false;
      await Promise.all(readers);
    },
  };
}

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

  it("answers every search while the replica's sessions are ended mid-statement, by running them again on the primary", async () => {
    // as a restart or a failover of the replica ends them: the searches in flight on it fail there
    const load = await searchesUnderWay();
    const retried = await reads("primary", "retried");
    let ended = 0;
    try {
      for (const deadline = Date.now() + 15_000; Date.now() < deadline && (ended < 5 || (await reads("primary", "retried")) === retried); ) {
        const rows = await replica.query<{ ended: boolean }>(
          "SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE backend_type = 'client backend' AND state = 'active' AND pid <> pg_backend_pid()",
        );
        ended += rows.length;
        await new Promise((r) => setTimeout(r, 10));
      }
    } finally {
      await load.stop();
    }
    expect(load.statuses.filter((status) => status !== 200)).toEqual([]);
    // the window was hit: searches failed on the replica and were answered by the primary
    expect(await reads("primary", "retried")).toBeGreaterThan(retried);
  });

  it("skips a replica that is down without an error to the caller, and uses it again once it is back", async () => {
    // stopped under load: the searches in flight on it when its sessions end are answered by the primary
    const load = await searchesUnderWay();
    replica.stop();
    try {
      await until("searches after the stop", () => load.statuses.length >= 60 || undefined);
      await load.stop();
      expect(load.statuses.filter((status) => status !== 200)).toEqual([]);
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

  it("reads a write made through another machine, before that machine hears of it, when the caller carries X-Svc-Read-After", async () => {
    // another machine: its own server process, whose LISTEN connection goes through a network that then goes dark
    const proxy = await startTcpProxy(primary.port);
    cleanups.push(() => proxy.close());
    const dir = mkdtempSync(join(tmpdir(), "svc-replicas-other-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const other = await startServerProcess(
      {
        SVC_DATA_DIR: dir,
        SVC_WORKERS: "1",
        DATABASE_URL: primary.url,
        SVC_DATABASE_DIRECT_URL: primary.url.replace(`:${primary.port}/`, `:${proxy.port}/`),
        SVC_MASTERKEY: TEST_MASTERKEY,
        SVC_DATABASE_REPLICA_URLS: replica.url,
      },
      150_000,
    );
    cleanups.push(() => killServerProcess(other));
    const getOrg = (id: string, headers: Record<string, string> = {}) => rest(other.url, "GET", `/resources/v3alpha/organizations/${id}`, { token, headers });
    /** Each round starts with the other machine reading from the replica, then pauses replay: what it is not told of, it reads stale. */
    const withReplayPaused = async (round: () => Promise<void>) => {
      await until("the other machine reading from the replica", async () => {
        const before = await reads("replica-1", undefined, other.url);
        await rest(other.url, "POST", "/resources/v3alpha/organizations/_search", { token, body: {} });
        return (await reads("replica-1", undefined, other.url)) > before || undefined;
      });
      await replica.pauseReplay();
      try {
        await round();
      } finally {
        await replica.resumeReplay();
      }
    };
    const position = /^[\dA-F]+\/[\dA-F]+$/;
    // the heartbeat notices a dark LISTEN connection only after 5 s, and tells reads once; a round takes milliseconds
    proxy.blackhole();
    try {
      await withReplayPaused(async () => {
        const created = await rest(server.url, "POST", "/resources/v3alpha/organizations", { token, body: { name: "carried-over" } });
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        const id = created.body.details.id as string;
        const carry = created.headers["x-svc-read-after"] as string;
        expect(carry).toMatch(position);
        // not carried: the other machine, not told yet, reads the replica, which does not have it
        expect((await getOrg(id)).status).toBe(404);
        const carried = await getOrg(id, { "X-Svc-Read-After": carry });
        expect(carried.status, JSON.stringify(carried.body)).toBe(200);
        expect(carried.body.organization.name).toBe("carried-over");
        expect(await replica.query("SELECT id FROM orgs WHERE id = $1", [id])).toEqual([]);
      });
      // written over each protocol (its answer's headers or gRPC metadata say the position), read over another
      for (const [i, protocol] of protocols.entries()) {
        const readOver = protocols[(i + 1) % protocols.length]!;
        await withReplayPaused(async () => {
          const name = `carried-over-${protocol}`;
          let carry: string | null = null;
          const createOrg = create(CreateOrganizationRequestSchema, { organization: { name } });
          const made = await call(protocol, server.url, OrganizationService, OrganizationService.method.createOrganization, createOrg, {
            token,
            onHeader: (h) => (carry = h.get("x-svc-read-after")),
          });
          expect(carry, protocol).toMatch(position);
          const getReq = create(GetOrganizationRequestSchema, { id: made.details!.id });
          const get = (headers?: Record<string, string>) =>
            call(readOver, other.url, OrganizationService, OrganizationService.method.getOrganization, getReq, { token, ...(headers ? { headers } : {}) });
          expect(((await get().catch((e: unknown) => e)) as ConnectError).code, `${protocol}, read over ${readOver} without it`).toBe(Code.NotFound);
          expect((await get({ "x-svc-read-after": carry! })).organization?.name, `${protocol}, read over ${readOver}`).toBe(name);
        });
      }
      // a browser carries it in a cookie, set when its request wrote
      await withReplayPaused(async () => {
        const browser = { "sec-fetch-mode": "cors" };
        const byBrowser = await rest(server.url, "POST", "/resources/v3alpha/organizations", { token, headers: browser, body: { name: "carried-by-cookie" } });
        const cookie = String(byBrowser.headers["set-cookie"]).split(";")[0]!;
        expect(cookie).toMatch(/^svc_read_after=[\dA-F]+\/[\dA-F]+$/);
        const id = byBrowser.body.details.id as string;
        expect((await getOrg(id, browser)).status).toBe(404);
        expect((await getOrg(id, { ...browser, cookie })).status).toBe(200);
      });
    } finally {
      proxy.heal();
    }
  });

  it("never answers with an older position than the caller carried, though it reads nothing", async () => {
    // past anything the primary has: the fence stays at the primary's own position, the caller keeps its own
    const ahead = "7FFFFFFF/0";
    const answer = await rest(server.url, "GET", "/healthz", { headers: { "X-Svc-Read-After": ahead } });
    expect(answer.headers["x-svc-read-after"]).toBe(ahead);
    const browser = await rest(server.url, "GET", "/healthz", { headers: { "sec-fetch-mode": "navigate", cookie: `svc_read_after=${ahead}` } });
    expect(browser.headers["x-svc-read-after"]).toBe(ahead);
    expect(browser.headers["set-cookie"]).toBeUndefined();
    // and reads still go to the replica
    const before = await reads("replica-1");
    await until("a read on the replica", async () => ((await searchOrgs()).status === 200 && (await reads("replica-1")) > before) || undefined);
  });

  it("refuses an X-Svc-Read-After that is not a WAL position, naming it, in the caller's protocol", async () => {
    const bad = await rest(server.url, "GET", "/resources/v3alpha/organizations/x", { token, headers: { "X-Svc-Read-After": "yesterday" } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain("X-Svc-Read-After");
    for (const protocol of protocols) {
      const refused = await call(
        protocol,
        server.url,
        OrganizationService,
        OrganizationService.method.getOrganization,
        create(GetOrganizationRequestSchema, { id: "x" }),
        {
          token,
          headers: { "x-svc-read-after": "1/2/3" },
        },
      ).catch((e: unknown) => e);
      expect(refused, protocol).toBeInstanceOf(ConnectError);
      expect((refused as ConnectError).code, `${protocol}: ${(refused as Error).message}`).toBe(Code.InvalidArgument);
      expect((refused as ConnectError).message, protocol).toContain("X-Svc-Read-After");
    }
    // a Connect stream (health's Watch) says it in its end message, where a client reads it
    const health = createClient(Health, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }));
    const watched = await (async () => {
      for await (const _ of health.watch({ service: "" }, { headers: { "x-svc-read-after": "soon" } })) return "answered";
      return "ended";
    })().catch((e: unknown) => e);
    expect((watched as ConnectError).code, String(watched)).toBe(Code.InvalidArgument);
    expect((watched as ConnectError).message).toContain("X-Svc-Read-After");
  });

  it("reports the replica's lag in /metrics", async () => {
    const text = (await rest(server.url, "GET", "/metrics")).body as string;
    expect(text).toMatch(/^svc_db_replica_up\{[^}]*replica="replica-1"[^}]*\} 1$/m);
    expect(text).toMatch(/^svc_db_replica_lag_seconds\{[^}]*replica="replica-1"/m);
  });
});
