import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FeatureService } from "../../gen/svc/feature/v2/feature_service_pb.js";
import {
  LanguageSettingsService,
  ResolveLanguageSettingsRequestSchema,
  SetLanguageSettingsRequestSchema,
} from "../../gen/svc/settings/language/v3alpha/language_service_pb.js";
import { call, connectClient, expectCode, protocols, rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

const svc = LanguageSettingsService;
const resolve = svc.method.resolveLanguages;
const set = svc.method.setLanguages;

let t: TestServer;
let outsider: string; // a service user with no role at all
let orgOwner: string; // ORG_OWNER of the default organisation only

beforeAll(async () => {
  t = await startTestServer();
  outsider = (await t.serviceUser("outsider")).token;
  orgOwner = (await t.serviceUser("org-owner", [{ type: "org", id: t.defaultOrgId, roles: ["ORG_OWNER"] }])).token;
});
afterAll(() => t?.close());

describe.each(protocols)("over %s", (protocol) => {
  const req = () => create(ResolveLanguageSettingsRequestSchema, {});

  it("resolves and sets languages", async () => {
    const setReq = create(SetLanguageSettingsRequestSchema, { settings: { defaultLanguage: { key: "fr" } } });
    const res = await call(protocol, t.url, svc, set, setReq, { token: t.adminPat });
    expect(res.details?.owner?.id).toBe(t.instanceId);
    const got = await call(protocol, t.url, svc, resolve, req(), { token: t.adminPat });
    expect(got.settings?.defaultLanguage?.value).toBe("fr");
    expect(got.settings?.defaultLanguage?.owner).toBeUndefined();
  });

  it("refuses an invalid language key with INVALID_ARGUMENT naming the field", async () => {
    const bad = create(SetLanguageSettingsRequestSchema, { settings: { defaultLanguage: { key: "french" } } });
    const err = await expectCode(call(protocol, t.url, svc, set, bad, { token: t.adminPat }), Code.InvalidArgument);
    expect(err.rawMessage).toContain("settings.default_language.key");
  });

  it("is UNAUTHENTICATED without a token and with a wrong one", async () => {
    await expectCode(call(protocol, t.url, svc, resolve, req()), Code.Unauthenticated);
    await expectCode(call(protocol, t.url, svc, resolve, req(), { token: "pat_not-a-real-token" }), Code.Unauthenticated);
  });

  it("is PERMISSION_DENIED for a caller without the permission", async () => {
    const f = FeatureService.method.getInstanceFeatures;
    await expectCode(call(protocol, t.url, FeatureService, f, create(f.input, {}), { token: outsider }), Code.PermissionDenied);
    const setReq = create(SetLanguageSettingsRequestSchema, { settings: { defaultLanguage: { key: "de" } } });
    await expectCode(call(protocol, t.url, svc, set, setReq, { token: orgOwner }), Code.PermissionDenied);
  });

  it("is NOT_FOUND for a host no instance is served at", async () => {
    const err = await expectCode(call(protocol, t.url, svc, resolve, req(), { token: t.adminPat, host: `unknown.example:${t.port}` }), Code.NotFound);
    expect(err.rawMessage).toContain("unknown.example");
  });
});

describe("REST", () => {
  it("resolves and sets, with the contract's status object on errors", async () => {
    const ok = await rest(t.url, "PATCH", "/settings/v3alpha/languages", { token: t.adminPat, body: { defaultLanguage: { key: "it" } } });
    expect(ok.status).toBe(200);
    expect(ok.body.details.sequence).toMatch(/^\d+$/);
    const got = await rest(t.url, "GET", "/settings/v3alpha/languages", { token: t.adminPat });
    expect(got.body.settings.defaultLanguage.value).toBe("it");

    const bad = await rest(t.url, "PATCH", "/settings/v3alpha/languages", { token: t.adminPat, body: { default_language: { key: "ITA" } } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe(Code.InvalidArgument);
    expect(bad.body.message).toContain("settings.default_language.key");

    expect((await rest(t.url, "GET", "/settings/v3alpha/languages")).status).toBe(401);
    const denied = await rest(t.url, "GET", "/v2/features/instance", { token: outsider });
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe(Code.PermissionDenied);
    const unknownHost = await rest(t.url, "GET", "/settings/v3alpha/languages", { token: t.adminPat, host: "nobody.example" });
    expect(unknownHost.status).toBe(404);
    expect(unknownHost.body.code).toBe(Code.NotFound);
  });

  it("names the field of a malformed body, an unknown query parameter and a wrong-typed one", async () => {
    const notJson = await rest(t.url, "PATCH", "/settings/v3alpha/languages", { token: t.adminPat, body: "{not json" });
    expect(notJson.status).toBe(400);
    expect(notJson.body.message).toContain("not valid JSON");
    const unknown = await rest(t.url, "GET", "/settings/v3alpha/languages?colour=red", { token: t.adminPat });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toContain('"colour"');
    const wrongType = await rest(t.url, "GET", "/settings/v3alpha/languages?ctx.system=maybe", { token: t.adminPat });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.message).toContain("ctx.system");
    const unknownField = await rest(t.url, "PATCH", "/settings/v3alpha/languages", { token: t.adminPat, body: { defaultLanguag: { key: "de" } } });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.message).toContain("defaultLanguag");
  });
});

describe("feature flag gate", () => {
  it("answers FAILED_PRECONDITION naming the flag on every protocol while multitenancy_settings is off", async () => {
    const features = connectClient(FeatureService, t.url, t.adminPat);
    await features.setInstanceFeatures({ multitenancySettings: false });
    try {
      for (const protocol of protocols) {
        const err = await expectCode(call(protocol, t.url, svc, resolve, create(resolve.input, {}), { token: t.adminPat }), Code.FailedPrecondition);
        expect(err.rawMessage).toContain("multitenancy_settings");
      }
      const r = await rest(t.url, "GET", "/settings/v3alpha/languages", { token: t.adminPat });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe(Code.FailedPrecondition);
      expect(r.body.message).toContain("multitenancy_settings");
    } finally {
      await features.setInstanceFeatures({ multitenancySettings: true });
    }
    expect((await rest(t.url, "GET", "/settings/v3alpha/languages", { token: t.adminPat })).status).toBe(200);
  });
});
