import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OwnerType } from "../../gen/svc/object/v3alpha/object_pb.js";
import {
  ResolveSecuritySettingsRequestSchema,
  SecuritySettingsService,
  SetSecuritySettingsRequestSchema,
} from "../../gen/svc/settings/security/v3alpha/security_service_pb.js";
import { call, expectCode, protocols, rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

// The security settings of the contract ("Security settings and token exchange"): svc.settings.security.v3alpha.
// SecuritySettingsService, REST GET|PATCH /settings/v3alpha/security, set / reset per property, resolved with the
// owner, inherited system > instance > organisation; impersonation off by default.
let t: TestServer;
let org: string;
beforeAll(async () => {
  t = await startTestServer();
  org = await t.org("Security Org");
});
afterAll(() => t?.close());

const patch = (body: object, query = "", token = t.adminPat) => rest(t.url, "PATCH", `/settings/v3alpha/security${query}`, { token, body });
const read = (query = "", token = t.adminPat) => rest(t.url, "GET", `/settings/v3alpha/security${query}`, { token });
const system = { type: "OWNER_TYPE_SYSTEM", id: "" };

describe("security settings over REST", () => {
  it("start from built-in values owned by the system: impersonation and iframe embedding off, no origins", async () => {
    const r = await read();
    expect(r.status).toBe(200);
    expect(r.body.settings).toEqual({
      enableImpersonation: { value: false, owner: system },
      allowedOrigins: { value: [], owner: system },
      enableIframeEmbedding: { value: false, owner: system },
    });
    expect(r.body.details.owner).toEqual({ type: "OWNER_TYPE_INSTANCE", id: t.instanceId });
  });

  it("are set per instance, overridden or reset per organisation, each property on its own", async () => {
    const set = await patch({ enableImpersonation: { set: true }, allowedOrigins: { set: { value: ["https://app.example.com", "http://localhost:3000"] } } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(Number(set.body.details.sequence)).toBeGreaterThan(0);
    expect((await patch({ enableImpersonation: { set: false } }, `?ctx.org_id=${org}`)).status).toBe(200);
    const inOrg = (await read(`?ctx.org_id=${org}`)).body.settings;
    expect(inOrg.enableImpersonation).toEqual({ value: false });
    expect(inOrg.allowedOrigins).toEqual({
      value: ["https://app.example.com", "http://localhost:3000"],
      owner: { type: "OWNER_TYPE_INSTANCE", id: t.instanceId },
    });
    expect(inOrg.enableIframeEmbedding).toEqual({ value: false, owner: system });
    expect((await patch({ enableImpersonation: { reset: true } }, `?ctx.org_id=${org}`)).status).toBe(200);
    expect((await read(`?ctx.org_id=${org}`)).body.settings.enableImpersonation).toEqual({
      value: true,
      owner: { type: "OWNER_TYPE_INSTANCE", id: t.instanceId },
    });
    // the instance's own read reports no owner for what it set itself
    expect((await read()).body.settings.enableImpersonation).toEqual({ value: true });
    expect((await patch({ enableImpersonation: { reset: true }, allowedOrigins: { reset: true } })).status).toBe(200);
    expect((await read()).body.settings.enableImpersonation).toEqual({ value: false, owner: system });
  });

  it("refuse origins that are not origins, naming the item, and set and reset together", async () => {
    for (const bad of [
      "https://app.example.com/path",
      "app.example.com",
      "javascript:alert(1)",
      "https://a;script-src *",
      "HTTPS://APP.EXAMPLE.COM",
      "https://app.example.com/",
    ]) {
      const r = await patch({ allowedOrigins: { set: { value: ["https://ok.example.com", bad] } } });
      expect([r.status, r.body.code], bad).toEqual([400, 3]);
      expect(r.body.message).toMatch(/settings\.allowed_origins\.set\.value\[1\].*is not an origin/);
    }
    expect((await patch({ enableImpersonation: { reset: false } })).status).toBe(400);
    expect((await patch({ enableImpersonation: {} })).status).toBe(400);
  });

  it("need policy.write in the context to change, any authenticated caller to read; the settings flag gates them", async () => {
    const viewer = await t.serviceUser("security-viewer", [{ type: "instance", id: t.instanceId, roles: ["IAM_OWNER_VIEWER"] }]);
    expect((await patch({ enableImpersonation: { set: true } }, "", viewer.token)).status).toBe(403);
    expect((await read("", viewer.token)).status).toBe(200);
    // an organisation's owner changes its organisation, not the instance
    const orgOwner = await t.serviceUser("security-org-owner", [{ type: "org", id: org, roles: ["ORG_OWNER"] }], org);
    expect((await patch({ enableImpersonation: { set: true } }, "", orgOwner.token)).status).toBe(403);
    expect((await patch({ enableImpersonation: { set: true } }, `?ctx.org_id=${org}`, orgOwner.token)).status).toBe(200);
    // impersonators cannot allow impersonation themselves; a bad token reads nothing
    const impersonator = await t.serviceUser("security-imp", [{ type: "instance", id: t.instanceId, roles: ["IAM_ADMIN_IMPERSONATOR"] }]);
    expect((await patch({ enableImpersonation: { set: true } }, "", impersonator.token)).status).toBe(403);
    expect((await read("", "pat_nothing")).status).toBe(401);
    expect((await rest(t.url, "PUT", "/v2/features/instance", { token: t.adminPat, body: { multitenancySettings: false } })).status).toBe(200);
    try {
      const off = await read();
      expect(off.status).toBe(400);
      expect(off.body.message).toContain("multitenancy_settings");
    } finally {
      await rest(t.url, "PUT", "/v2/features/instance", { token: t.adminPat, body: { multitenancySettings: true } });
    }
    await patch({ enableImpersonation: { reset: true } }, `?ctx.org_id=${org}`);
  });
});

describe("security settings over gRPC, gRPC-web and Connect", () => {
  it("set and resolve on every protocol, with the owner of each value and the permission checked", async () => {
    const viewer = await t.serviceUser("security-grpc-viewer", [{ type: "instance", id: t.instanceId, roles: ["IAM_OWNER_VIEWER"] }]);
    const ctx = { owner: { case: "orgId" as const, value: org } };
    for (const [i, protocol] of protocols.entries()) {
      const origin = `https://app${i}.example.com`;
      const set = await call(
        protocol,
        t.url,
        SecuritySettingsService,
        SecuritySettingsService.method.setSecuritySettings,
        create(SetSecuritySettingsRequestSchema, {
          ctx,
          settings: {
            allowedOrigins: { value: { case: "set", value: { value: [origin] } } },
            enableIframeEmbedding: { value: { case: "reset", value: true } },
          },
        }),
        { token: t.adminPat },
      );
      expect(set.details?.owner?.type, protocol).toBe(OwnerType.ORG);
      const r = await call(
        protocol,
        t.url,
        SecuritySettingsService,
        SecuritySettingsService.method.resolveSecuritySettings,
        create(ResolveSecuritySettingsRequestSchema, { ctx }),
        { token: viewer.token },
      );
      expect(r.settings?.allowedOrigins?.value, protocol).toEqual([origin]);
      expect(r.settings?.allowedOrigins?.owner, protocol).toBeUndefined();
      expect(r.settings?.enableImpersonation?.value).toBe(false);
      expect(r.settings?.enableImpersonation?.owner?.type).toBe(OwnerType.SYSTEM);
      await expectCode(
        call(
          protocol,
          t.url,
          SecuritySettingsService,
          SecuritySettingsService.method.setSecuritySettings,
          create(SetSecuritySettingsRequestSchema, { ctx, settings: { enableImpersonation: { value: { case: "set", value: true } } } }),
          { token: viewer.token },
        ),
        Code.PermissionDenied,
      );
    }
    await patch({ allowedOrigins: { reset: true } }, `?ctx.org_id=${org}`);
  });
});

describe("iframe embedding: the login UI names the allowed origins as frame ancestors only while it is enabled", () => {
  it("never framed by default; enabled, CSP frame-ancestors lists the allowed origins and X-Frame-Options is gone", async () => {
    const page = () => rest(t.url, "GET", "/ui/login");
    const before = await page();
    expect(before.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(before.headers["x-frame-options"]).toBe("DENY");
    // origins alone do nothing
    await patch({ allowedOrigins: { set: { value: ["https://portal.example.com", "https://help.example.com:8443"] } } });
    expect((await page()).headers["x-frame-options"]).toBe("DENY");
    await patch({ enableIframeEmbedding: { set: true } });
    try {
      const framed = await page();
      expect(framed.status).toBe(200);
      expect(framed.headers["content-security-policy"]).toMatch(/frame-ancestors https:\/\/portal\.example\.com https:\/\/help\.example\.com:8443(;|$)/);
      expect(framed.headers["content-security-policy"]).toContain("default-src 'none'");
      expect(framed.headers["x-frame-options"]).toBeUndefined();
      // enabled without origins: still framed by nobody
      await patch({ allowedOrigins: { reset: true } });
      expect((await page()).headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    } finally {
      await patch({ enableIframeEmbedding: { reset: true }, allowedOrigins: { reset: true } });
    }
    expect((await page()).headers["x-frame-options"]).toBe("DENY");
  });
});
