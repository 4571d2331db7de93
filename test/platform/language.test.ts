import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OwnerType } from "../../gen/svc/object/v3alpha/object_pb.js";
import { LanguageSettingsService } from "../../gen/svc/settings/language/v3alpha/language_service_pb.js";
import { connectClient, expectCode, rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

let t: TestServer;
let lang: ReturnType<typeof connectClient<typeof LanguageSettingsService>>;
const system = { owner: { case: "system" as const, value: true } };
const org = () => ({ owner: { case: "orgId" as const, value: t.defaultOrgId } });
const keys = (l?: { value: { key: string }[] }) => l?.value.map((x) => x.key);

beforeAll(async () => {
  t = await startTestServer();
  lang = connectClient(LanguageSettingsService, t.url, t.adminPat);
});
afterAll(() => t?.close());

describe("language settings inheritance (system > instance > org)", () => {
  it("starts with the system's built-in values, reported as inherited from the system", async () => {
    const r = await lang.resolveLanguages({ ctx: org() });
    expect(r.settings?.defaultLanguage?.value).toBe("en");
    expect(r.settings?.defaultLanguage?.owner?.type).toBe(OwnerType.SYSTEM);
    expect(r.settings?.supportedLanguages?.owner?.type).toBe(OwnerType.SYSTEM);
    expect(r.details?.owner?.type).toBe(OwnerType.ORG);
    expect(r.details?.owner?.id).toBe(t.defaultOrgId);
    expect(r.details?.sequence).toBe(0n);
  });

  it("sets, overrides and resets each property on its own, reporting the owner it is inherited from", async () => {
    await lang.setLanguages({
      ctx: system,
      settings: { defaultLanguage: { key: "de" }, restrictedLanguages: { languages: [{ key: "de" }, { key: "en" }, { key: "fr" }] } },
    });
    let r = await lang.resolveLanguages({ ctx: org() });
    expect(r.settings?.defaultLanguage).toMatchObject({ value: "de", owner: { type: OwnerType.SYSTEM } });
    expect(keys(r.settings?.restrictedLanguages)).toEqual(["de", "en", "fr"]);

    const inst = await lang.setLanguages({ settings: { defaultLanguage: { key: "fr" } } });
    expect(inst.details?.owner).toMatchObject({ type: OwnerType.INSTANCE, id: t.instanceId });
    r = await lang.resolveLanguages({ ctx: org() });
    expect(r.settings?.defaultLanguage).toMatchObject({ value: "fr", owner: { type: OwnerType.INSTANCE, id: t.instanceId } });
    // restricted still comes from the system: only the present field changed
    expect(r.settings?.restrictedLanguages?.owner?.type).toBe(OwnerType.SYSTEM);

    await lang.setLanguages({ ctx: org(), settings: { defaultLanguage: { key: "en" }, restrictedLanguages: { languages: [{ key: "en" }] } } });
    r = await lang.resolveLanguages({ ctx: org() });
    expect(r.settings?.defaultLanguage?.value).toBe("en");
    expect(r.settings?.defaultLanguage?.owner).toBeUndefined();
    expect(keys(r.settings?.restrictedLanguages)).toEqual(["en"]);
    expect(r.settings?.restrictedLanguages?.owner).toBeUndefined();
    // the instance is not affected by its organisation
    expect((await lang.resolveLanguages({})).settings?.defaultLanguage?.value).toBe("fr");

    // reset the org's default: back to the instance's; the restricted list stays the org's own
    await lang.setLanguages({ ctx: org(), settings: { resetDefaultLanguage: true } });
    r = await lang.resolveLanguages({ ctx: org() });
    expect(r.settings?.defaultLanguage).toMatchObject({ value: "fr", owner: { type: OwnerType.INSTANCE } });
    expect(keys(r.settings?.restrictedLanguages)).toEqual(["en"]);

    // an empty restricted list resets it too; then the system's list shows through
    await lang.setLanguages({ ctx: org(), settings: { restrictedLanguages: { languages: [] } } });
    r = await lang.resolveLanguages({ ctx: org() });
    expect(keys(r.settings?.restrictedLanguages)).toEqual(["de", "en", "fr"]);
    expect(r.settings?.restrictedLanguages?.owner?.type).toBe(OwnerType.SYSTEM);

    // reset at the instance: the system's default shows through in the org
    await lang.setLanguages({ settings: { resetDefaultLanguage: true } });
    r = await lang.resolveLanguages({ ctx: org() });
    expect(r.settings?.defaultLanguage).toMatchObject({ value: "de", owner: { type: OwnerType.SYSTEM } });
  });

  it("reports Details from the events: sequence and change date move only on a real change", async () => {
    const first = await lang.setLanguages({ settings: { defaultLanguage: { key: "it" } } });
    const again = await lang.setLanguages({ settings: { defaultLanguage: { key: "it" } } });
    expect(again.details?.sequence).toBe(first.details?.sequence);
    expect(again.details?.changeDate).toEqual(first.details?.changeDate);
    const changed = await lang.setLanguages({ settings: { defaultLanguage: { key: "es" } } });
    expect(changed.details!.sequence).toBe(first.details!.sequence + 1n);
    const read = await lang.resolveLanguages({});
    expect(read.details?.sequence).toBe(changed.details?.sequence);
    expect(read.details?.changeDate).toEqual(changed.details?.changeDate);
    const events = await t.server.db.prisma.event.count({ where: { type: "settings.language.set", aggregateId: `language/instance/${t.instanceId}` } });
    expect(BigInt(events)).toBe(changed.details!.sequence);
  });

  it("keeps the supported languages immutable and owned by the system", async () => {
    const r = await lang.resolveLanguages({ ctx: system });
    expect(keys(r.settings?.supportedLanguages)).toContain("en");
    expect(r.settings?.supportedLanguages?.owner?.type).toBe(OwnerType.SYSTEM);
    const body = { supportedLanguages: { languages: [{ key: "xx" }] } };
    const res = await rest(t.url, "PATCH", "/settings/v3alpha/languages", { token: t.adminPat, body });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain("supportedLanguages");
  });

  it("refuses keys outside ^[a-z]{2}$, unsupported languages, and contradictory set and reset", async () => {
    for (const key of ["EN", "eng", "e", "", "e1"]) {
      const err = await expectCode(lang.setLanguages({ settings: { defaultLanguage: { key } } }), Code.InvalidArgument);
      expect(err.rawMessage).toContain("settings.default_language.key");
    }
    const bad = await expectCode(lang.setLanguages({ settings: { restrictedLanguages: { languages: [{ key: "en" }, { key: "xx" }] } } }), Code.InvalidArgument);
    expect(bad.rawMessage).toContain("settings.restricted_languages.languages[1].key");
    await expectCode(lang.setLanguages({ settings: { defaultLanguage: { key: "en" }, resetDefaultLanguage: true } }), Code.InvalidArgument);
    await expectCode(lang.setLanguages({}), Code.InvalidArgument);
  });

  it("works over REST with ctx as query parameters, proto and camelCase names alike", async () => {
    const set = await rest(t.url, "PATCH", `/settings/v3alpha/languages?ctx.org_id=${t.defaultOrgId}`, {
      token: t.adminPat,
      body: { default_language: { key: "pl" } },
    });
    expect(set.status).toBe(200);
    expect(set.body.details.owner).toEqual({ type: "OWNER_TYPE_ORG", id: t.defaultOrgId });
    const got = await rest(t.url, "GET", `/settings/v3alpha/languages?ctx.orgId=${t.defaultOrgId}`, { token: t.adminPat });
    expect(got.body.settings.defaultLanguage).toEqual({ value: "pl" });
    const sys = await rest(t.url, "GET", `/settings/v3alpha/languages?ctx.system=true`, { token: t.adminPat });
    expect(sys.body.details.owner.type).toBe("OWNER_TYPE_SYSTEM");
    const missingOrg = await rest(t.url, "GET", `/settings/v3alpha/languages?ctx.org_id=999`, { token: t.adminPat });
    expect(missingOrg.status).toBe(404);
  });

  it("lets an organisation owner change its own organisation only", async () => {
    const { token } = await t.serviceUser("lang-org-owner", [{ type: "org", id: t.defaultOrgId, roles: ["ORG_OWNER"] }]);
    const own = connectClient(LanguageSettingsService, t.url, token);
    await own.setLanguages({ ctx: org(), settings: { defaultLanguage: { key: "ja" } } });
    await expectCode(own.setLanguages({ settings: { defaultLanguage: { key: "ja" } } }), Code.PermissionDenied);
    await expectCode(own.setLanguages({ ctx: system, settings: { defaultLanguage: { key: "ja" } } }), Code.PermissionDenied);
    // reading is open to any authenticated caller (the specification's `authenticated`)
    expect((await own.resolveLanguages({})).settings?.defaultLanguage?.value).toBeTruthy();
  });
});
