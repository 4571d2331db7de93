import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FeatureService, Source } from "../../gen/svc/feature/v2/feature_service_pb.js";
import { LanguageSettingsService } from "../../gen/svc/settings/language/v3alpha/language_service_pb.js";
import { connectClient, expectCode, rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

let t: TestServer;
let features: ReturnType<typeof connectClient<typeof FeatureService>>;

beforeAll(async () => {
  t = await startTestServer();
  features = connectClient(FeatureService, t.url, t.adminPat);
});
afterAll(() => t?.close());

describe("feature flags", () => {
  it("are created for the first instance with the preview APIs on and token exchange off", async () => {
    const f = await features.getInstanceFeatures({});
    expect(f.multitenancyResourcesApi).toMatchObject({ enabled: true, source: Source.INSTANCE });
    expect(f.multitenancySettings).toMatchObject({ enabled: true, source: Source.INSTANCE });
    expect(f.oidcTokenExchange).toMatchObject({ enabled: false, source: Source.INSTANCE });
    const sys = await features.getSystemFeatures({});
    expect(sys.multitenancySettings).toMatchObject({ enabled: false, source: Source.DEFAULT });
  });

  it("inherit system > instance > organization, with the source of each value, and reset", async () => {
    await features.setSystemFeatures({ oidcTokenExchange: true });
    await features.resetInstanceFeatures({});
    let org = await features.getOrganizationFeatures({ organizationId: t.defaultOrgId });
    expect(org.oidcTokenExchange).toMatchObject({ enabled: true, source: Source.SYSTEM });
    expect(org.multitenancySettings).toMatchObject({ enabled: false, source: Source.DEFAULT });

    await features.setInstanceFeatures({ multitenancySettings: true, oidcTokenExchange: false });
    org = await features.getOrganizationFeatures({ organizationId: t.defaultOrgId });
    expect(org.oidcTokenExchange).toMatchObject({ enabled: false, source: Source.INSTANCE });

    await features.setOrganizationFeatures({ organizationId: t.defaultOrgId, oidcTokenExchange: true });
    org = await features.getOrganizationFeatures({ organizationId: t.defaultOrgId });
    expect(org.oidcTokenExchange).toMatchObject({ enabled: true, source: Source.ORGANIZATION });
    expect(org.details?.owner?.id).toBe(t.defaultOrgId);

    await features.resetOrganizationFeatures({ organizationId: t.defaultOrgId });
    org = await features.getOrganizationFeatures({ organizationId: t.defaultOrgId });
    expect(org.oidcTokenExchange).toMatchObject({ enabled: false, source: Source.INSTANCE });
    await features.resetSystemFeatures({});
    await features.setInstanceFeatures({ multitenancyResourcesApi: true, multitenancySettings: true });
  });

  it("gate a service per organisation: off in one organisation, on in the instance", async () => {
    const lang = connectClient(LanguageSettingsService, t.url, t.adminPat);
    await features.setOrganizationFeatures({ organizationId: t.defaultOrgId, multitenancySettings: false });
    const err = await expectCode(lang.resolveLanguages({ ctx: { owner: { case: "orgId", value: t.defaultOrgId } } }), Code.FailedPrecondition);
    expect(err.rawMessage).toContain("multitenancy_settings");
    // Set declares its permission (policy.write per context), checked before the gate: a caller who may not
    // write learns nothing about the flags
    const { token } = await t.serviceUser("gate-outsider");
    const outsider = connectClient(LanguageSettingsService, t.url, token);
    await expectCode(
      outsider.setLanguages({ ctx: { owner: { case: "orgId", value: t.defaultOrgId } }, settings: { defaultLanguage: { key: "de" } } }),
      Code.PermissionDenied,
    );
    await lang.resolveLanguages({});
    await features.resetOrganizationFeatures({ organizationId: t.defaultOrgId });
    await lang.resolveLanguages({ ctx: { owner: { case: "orgId", value: t.defaultOrgId } } });
  });

  it("are served over REST at the contract's paths", async () => {
    const put = await rest(t.url, "PUT", "/v2/features/instance", { token: t.adminPat, body: { oidcTokenExchange: true } });
    expect(put.status).toBe(200);
    const got = await rest(t.url, "GET", "/v2/features/instance", { token: t.adminPat });
    expect(got.body.oidcTokenExchange).toEqual({ enabled: true, source: "SOURCE_INSTANCE" });
    const org = await rest(t.url, "GET", `/v2/features/organization/${t.defaultOrgId}`, { token: t.adminPat });
    expect(org.body.oidcTokenExchange.source).toBe("SOURCE_INSTANCE");
    expect((await rest(t.url, "DELETE", `/v2/features/organization/${t.defaultOrgId}`, { token: t.adminPat })).status).toBe(200);
    expect((await rest(t.url, "GET", `/v2/features/organization/424242`, { token: t.adminPat })).status).toBe(404);
    expect((await rest(t.url, "DELETE", "/v2/features/system", { token: t.adminPat })).status).toBe(200);
  });

  it("need the level's permission: an organisation owner manages its organisation's flags only", async () => {
    const { token } = await t.serviceUser("feature-org-owner", [{ type: "org", id: t.defaultOrgId, roles: ["ORG_OWNER"] }]);
    const own = connectClient(FeatureService, t.url, token);
    await own.getOrganizationFeatures({ organizationId: t.defaultOrgId });
    await expectCode(own.getInstanceFeatures({}), Code.PermissionDenied);
    await expectCode(own.setSystemFeatures({ oidcTokenExchange: true }), Code.PermissionDenied);
    const { token: iamOwner } = await t.serviceUser("feature-iam-owner", [{ type: "instance", id: t.instanceId, roles: ["IAM_OWNER"] }]);
    const inst = connectClient(FeatureService, t.url, iamOwner);
    await inst.setInstanceFeatures({ oidcTokenExchange: false });
    await expectCode(inst.getSystemFeatures({}), Code.PermissionDenied);
  });
});
