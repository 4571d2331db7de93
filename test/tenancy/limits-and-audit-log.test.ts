import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventService, SearchEventsRequestSchema } from "../../gen/svc/resources/event/v3alpha/event_service_pb.js";
import { LanguageSettingsService, ResolveLanguageSettingsRequestSchema } from "../../gen/svc/settings/language/v3alpha/language_service_pb.js";
import { call, expectCode, rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

// Instance limits (system API) and the audit log.
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

const api = (method: string, path: string, body?: unknown, token = t.adminPat) =>
  rest(t.url, method, `/resources/v3alpha${path}`, { token, ...(body ? { body } : {}) });
const search = (body: unknown, token?: string) => api("POST", "/events/_search", body, token);
const limit = (limits: unknown) => api("POST", `/instances/${t.instanceId}/_limit`, { limits });

async function createTarget(name: string): Promise<string> {
  const r = await api("POST", "/targets", { name, restWebhook: { url: "https://example.com/hook" }, timeout: "5s" });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.details.id;
}

describe("audit log", () => {
  it("finds the instance's events by aggregate, type, editor, time and position, newest first, without secrets", async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const id = await createTarget("audited");
    await api("PATCH", `/targets/${id}`, { name: "audited-2" });
    const byAggregate = await search({ filters: [{ aggregateId: id }] });
    expect(byAggregate.status, JSON.stringify(byAggregate.body)).toBe(200);
    const events = byAggregate.body.result;
    expect(events.map((e: { type: string }) => e.type)).toEqual(["action.target.changed", "action.target.added"]);
    expect(byAggregate.body.details.totalResult).toBe("2");
    const added = events[1];
    expect(added).toMatchObject({ aggregateType: "target", aggregateId: id, sequence: "1", resourceOwner: t.instanceId });
    expect(added.payload.name).toBe("audited");
    // The target's signing key is sealed in the log; it never leaves the server.
    expect(added.payload.signingKey).toBeUndefined();
    expect(JSON.stringify(added.payload)).not.toMatch(/v1\./);

    const editor = added.editorUserId as string;
    const filtered = await search({
      filters: [
        { aggregateTypes: { types: ["target"] } },
        { eventTypes: { types: ["action.target.added"] } },
        { editorUserId: editor },
        { creationDate: { since } },
      ],
      query: { asc: true, limit: 10 },
    });
    expect(filtered.body.result.map((e: { aggregateId: string }) => e.aggregateId)).toEqual([id]);
    const after = await search({ filters: [{ aggregateId: id }, { fromPosition: added.position }] });
    expect(after.body.result.map((e: { type: string }) => e.type)).toEqual(["action.target.changed"]);
    const page = await search({ filters: [{ aggregateId: id }], query: { limit: 1, offset: "1" } });
    expect(page.body.result).toHaveLength(1);
    expect(page.body.details).toMatchObject({ appliedLimit: 1, endOfList: true, totalResult: "2" });

    const types = await api("GET", "/events/types");
    expect(types.body.eventTypes).toContain("action.target.added");
    expect(types.body.aggregateTypes).toContain("target");
  });

  it("over gRPC; refused without events.read; filters are checked", async () => {
    const r = await call("grpc", t.url, EventService, EventService.method.searchEvents, create(SearchEventsRequestSchema, { query: { limit: 5 } }), {
      token: t.adminPat,
    });
    expect(r.result.length).toBe(5);
    expect(r.result[0]!.position > r.result[1]!.position).toBe(true);
    const orgOwner = await t.serviceUser("audit-org-owner", [{ type: "org", id: t.defaultOrgId, roles: ["ORG_OWNER"] }]);
    expect((await search({}, orgOwner.token)).status).toBe(403);
    const long = await search({ filters: [{ aggregateId: "x".repeat(300) }] });
    expect(long.status).toBe(400);
    expect(long.body.message).toContain("aggregate_id");
  });

  it("hides events older than the instance's retention, and shows them again when it is reset", async () => {
    const id = await createTarget("old-one");
    // An event of two days ago (as a log that has run for a while has).
    await t.server.db.pool.query("UPDATE events SET created_at = now() - interval '2 days' WHERE aggregate_id = $1", [id]);
    expect((await search({ filters: [{ aggregateId: id }] })).body.result).toHaveLength(1);
    expect((await limit({ auditLogRetention: "86400s" })).status).toBe(200);
    expect((await search({ filters: [{ aggregateId: id }] })).body.result).toHaveLength(0);
    // Newer events stay.
    expect((await search({ query: { limit: 1 } })).body.result).toHaveLength(1);
    expect((await limit({ resetAuditLogRetention: true })).status).toBe(200);
    expect((await search({ filters: [{ aggregateId: id }] })).body.result).toHaveLength(1);
    const short = await limit({ auditLogRetention: "60s" });
    expect(short.status).toBe(400);
    expect(short.body.message).toContain("limits.audit_log_retention");
  });
});

describe("instance limits", () => {
  it("a blocked instance answers 429 on REST, gRPC, OIDC and the login UI, and serves again when unblocked", async () => {
    const languages = () => rest(t.url, "GET", "/settings/v3alpha/languages", { token: t.adminPat });
    expect((await languages()).status).toBe(200);
    expect((await limit({ block: true })).status).toBe(200);
    try {
      const blocked = await languages();
      expect(blocked.status).toBe(429);
      expect(blocked.body.message).toContain("blocked");
      await expectCode(
        call("grpc", t.url, LanguageSettingsService, LanguageSettingsService.method.resolveLanguages, create(ResolveLanguageSettingsRequestSchema, {}), {
          token: t.adminPat,
        }),
        Code.ResourceExhausted,
      );
      const discovery = await fetch(`${t.url}/.well-known/openid-configuration`);
      expect(discovery.status).toBe(429);
      expect(await discovery.json()).toMatchObject({ error: "temporarily_unavailable" });
      const token = await fetch(`${t.url}/oauth/v2/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=client_credentials",
      });
      expect(token.status).toBe(429);
      const login = await fetch(`${t.url}/ui/login`);
      expect(login.status).toBe(429);
      expect(await login.text()).toContain("not available");
      expect((await fetch(`${t.url}/ui/login/style.css`)).status).toBe(200);
    } finally {
      // The system API is never blocked: the same Host unblocks.
      expect((await limit({ block: false })).status).toBe(200);
    }
    expect((await languages()).status).toBe(200);
    expect((await fetch(`${t.url}/.well-known/openid-configuration`)).status).toBe(200);
  });

  it("BulkLimit changes all or nothing, names the entry of an unknown instance, and needs a system permission", async () => {
    const bulk = await api("POST", "/instances/_bulk_limit", {
      limits: [
        { instanceId: t.instanceId, limits: { block: true } },
        { instanceId: "nope", limits: { block: true } },
      ],
    });
    expect(bulk.status).toBe(404);
    expect(bulk.body.message).toContain("limits[1]");
    expect((await rest(t.url, "GET", "/settings/v3alpha/languages", { token: t.adminPat })).status).toBe(200);
    const ok = await api("POST", "/instances/_bulk_limit", { limits: [{ instanceId: t.instanceId, limits: { auditLogRetention: "7200s" } }] });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.details).toHaveLength(1);
    expect((await t.server.db.prisma.instance.findUniqueOrThrow({ where: { id: t.instanceId } })).auditLogRetentionS).toBe(7200);
    await limit({ resetAuditLogRetention: true });

    const instanceOwner = await t.serviceUser("limits-iam-owner", [{ type: "instance", id: t.instanceId, roles: ["IAM_OWNER"] }]);
    expect((await api("POST", `/instances/${t.instanceId}/_limit`, { limits: { block: true } }, instanceOwner.token)).status).toBe(403);
  });
});
