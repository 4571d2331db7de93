import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FeatureService } from "../../gen/svc/feature/v2/feature_service_pb.js";
import { ActionService } from "../../gen/svc/resources/action/v3alpha/action_service_pb.js";
import { TargetFieldName } from "../../gen/svc/resources/action/v3alpha/target_pb.js";
import { TextFilterMethod } from "../../gen/svc/resources/object/v3alpha/object_pb.js";
import { connectClient, expectCode, rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

let t: TestServer;
let api: ReturnType<typeof connectClient<typeof ActionService>>;
const webhook = (name: string, extra: object = {}) => ({ name, restWebhook: { url: "https://example.com/hook" }, timeout: "5s", ...extra });

beforeAll(async () => {
  t = await startTestServer();
  api = connectClient(ActionService, t.url, t.adminPat);
});
afterAll(() => t?.close());

describe("targets", () => {
  it("are created (201), read, patched partially, and deleted over REST", async () => {
    const created = await rest(t.url, "POST", "/resources/v3alpha/targets", { token: t.adminPat, body: webhook("crud", { interruptOnError: true }) });
    expect(created.status).toBe(201);
    expect(created.body.signingKey).toMatch(/^[\w-]{43}$/);
    const id = created.body.details.id;
    expect(created.body.details).toMatchObject({ sequence: "1", resourceOwner: { type: "OWNER_TYPE_INSTANCE", id: t.instanceId } });

    const got = await rest(t.url, "GET", `/resources/v3alpha/targets/${id}`, { token: t.adminPat });
    expect(got.body.target.target).toEqual({ name: "crud", restWebhook: { url: "https://example.com/hook" }, timeout: "5s", interruptOnError: true });

    const patched = await rest(t.url, "PATCH", `/resources/v3alpha/targets/${id}`, { token: t.adminPat, body: { timeout: "7.5s" } });
    expect(patched.status).toBe(200);
    expect(patched.body.details.sequence).toBe("2");
    const after = (await rest(t.url, "GET", `/resources/v3alpha/targets/${id}`, { token: t.adminPat })).body.target.target;
    expect(after).toEqual({ name: "crud", restWebhook: { url: "https://example.com/hook" }, timeout: "7.500s", interruptOnError: true });

    // a patch that changes nothing succeeds and writes no event
    const same = await rest(t.url, "PATCH", `/resources/v3alpha/targets/${id}`, { token: t.adminPat, body: { name: "crud", timeout: "7.5s" } });
    expect(same.status).toBe(200);
    expect(same.body.details.sequence).toBe("2");
    expect(await t.server.db.prisma.event.count({ where: { aggregateId: id } })).toBe(2);

    const switched = await rest(t.url, "PATCH", `/resources/v3alpha/targets/${id}`, {
      token: t.adminPat,
      body: { restRequestResponse: { url: "https://example.com/rr" }, isAsync: true },
    });
    expect(switched.status).toBe(200);
    const rr = (await rest(t.url, "GET", `/resources/v3alpha/targets/${id}`, { token: t.adminPat })).body.target.target;
    expect(rr).toEqual({ name: "crud", restRequestResponse: { url: "https://example.com/rr" }, timeout: "7.500s", isAsync: true });

    expect((await rest(t.url, "DELETE", `/resources/v3alpha/targets/${id}`, { token: t.adminPat })).status).toBe(200);
    expect((await rest(t.url, "GET", `/resources/v3alpha/targets/${id}`, { token: t.adminPat })).status).toBe(404);
    expect((await rest(t.url, "DELETE", `/resources/v3alpha/targets/${id}`, { token: t.adminPat })).status).toBe(404);
    expect((await rest(t.url, "PATCH", `/resources/v3alpha/targets/${id}`, { token: t.adminPat, body: { name: "x" } })).status).toBe(404);
  });

  it("refuse a second target of the same name (409), created or renamed, and store no event for it", async () => {
    const post = (name: string) => rest(t.url, "POST", "/resources/v3alpha/targets", { token: t.adminPat, body: webhook(name) });
    const first = await post("twice");
    expect(first.status).toBe(201);
    const eventsBefore = await t.server.db.prisma.event.count({ where: { instanceId: t.instanceId } });
    const again = await post("twice");
    expect(again.status).toBe(409);
    expect(again.body.message).toContain('a target named "twice" already exists');
    const other = (await post("other")).body.details.id as string;
    const renamed = await rest(t.url, "PATCH", `/resources/v3alpha/targets/${other}`, { token: t.adminPat, body: { name: "twice" } });
    expect(renamed.status).toBe(409);
    expect(renamed.body.message).toContain('a target named "twice" already exists');
    // Only "other" was stored; its name is unchanged.
    expect(await t.server.db.prisma.event.count({ where: { instanceId: t.instanceId } })).toBe(eventsBefore + 1);
    expect((await rest(t.url, "GET", `/resources/v3alpha/targets/${other}`, { token: t.adminPat })).body.target.target.name).toBe("other");
    // Many at once with one name: exactly one is created.
    const racing = await Promise.all(Array.from({ length: 8 }, () => post("racing")));
    expect(racing.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
  });

  it("enforce every field rule, naming the field", async () => {
    const cases: [object, string][] = [
      [{ name: "u1", restWebhook: { url: "" }, timeout: "1s" }, "target.rest_webhook.url"],
      [{ name: "u2", restWebhook: { url: "not a uri" }, timeout: "1s" }, "target.rest_webhook.url"],
      [{ name: "u3", restRequestResponse: { url: `https://example.com/${"x".repeat(1000)}` }, timeout: "1s" }, "target.rest_request_response.url"],
      [{ name: "u4", timeout: "1s" }, "target.target_type"],
      [{ name: "u5", restWebhook: { url: "https://example.com" } }, "target.timeout"],
      [{ name: "u6", restWebhook: { url: "https://example.com" }, timeout: "0s" }, "target.timeout"],
      [{ name: "", restWebhook: { url: "https://example.com" }, timeout: "1s" }, "target.name"],
      [{ name: "u7", restWebhook: { url: "https://example.com" }, timeout: "1s", isAsync: true, interruptOnError: true }, "execution_type"],
    ];
    for (const [body, field] of cases) {
      const r = await rest(t.url, "POST", "/resources/v3alpha/targets", { token: t.adminPat, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe(Code.InvalidArgument);
      expect(r.body.message).toContain(field.split(".").pop()!.replace("execution_type", "execution"));
    }
    const ok = await rest(t.url, "POST", "/resources/v3alpha/targets", { token: t.adminPat, body: webhook("dup") });
    expect(ok.status).toBe(201);
    const dup = await rest(t.url, "POST", "/resources/v3alpha/targets", { token: t.adminPat, body: webhook("dup") });
    expect(dup.status).toBe(409);
    expect((await rest(t.url, "GET", `/resources/v3alpha/targets/${"9".repeat(201)}`, { token: t.adminPat })).status).toBe(400);
  });

  it("are searched with every text method, by IDs, sorted by every column, paged, with truthful ListDetails", async () => {
    // Created in an order that differs from every sortable column's order, with no two columns in the same
    // order (only ID and creation date follow creation, as IDs grow with time). Names share one case order
    // under code-point and linguistic collations alike.
    const specs = [
      { name: "gamma-ALPHA", type: "restRequestResponse", url: "https://c.example.com", seconds: 3, exec: "isAsync" },
      { name: "alpha-two", type: "restWebhook", url: "https://d.example.com", seconds: 1, exec: "interruptOnError" },
      { name: "beta-one", type: "restRequestResponse", url: "https://a.example.com", seconds: 4, exec: undefined },
      { name: "Alpha-one", type: "restWebhook", url: "https://b.example.com", seconds: 2, exec: "isAsync" },
    ] as const;
    const ids: string[] = [];
    for (const s of specs) {
      const r = await api.createTarget({
        ctx: { owner: { case: "instanceId", value: t.instanceId } },
        target: {
          name: s.name,
          targetType: { case: s.type, value: { url: s.url } },
          // changed below, so that the change dates follow yet another order
          timeout: { seconds: 30n },
          executionType: s.exec ? { case: s.exec, value: true } : { case: undefined },
        },
      });
      ids.push(r.details!.id);
    }
    const changeOrder = [2, 0, 3, 1];
    for (const i of changeOrder) await api.patchTarget({ id: ids[i]!, target: { timeout: { seconds: BigInt(specs[i]!.seconds) } } });
    const byName = async (name: string, method: TextFilterMethod) =>
      (await api.searchTargets({ filters: [{ filter: { case: "inIds", value: { ids } } }, { filter: { case: "name", value: { name, method } } }] })).result
        .map((r) => r.target!.name)
        .sort();
    expect(await byName("alpha-two", TextFilterMethod.EQUALS)).toEqual(["alpha-two"]);
    expect(await byName("ALPHA-TWO", TextFilterMethod.EQUALS)).toEqual([]);
    expect(await byName("ALPHA-TWO", TextFilterMethod.EQUALS_IGNORE_CASE)).toEqual(["alpha-two"]);
    expect(await byName("alpha", TextFilterMethod.STARTS_WITH)).toEqual(["alpha-two"]);
    expect(await byName("alpha", TextFilterMethod.STARTS_WITH_IGNORE_CASE)).toEqual(["Alpha-one", "alpha-two"]);
    expect(await byName("-one", TextFilterMethod.CONTAINS)).toEqual(["Alpha-one", "beta-one"]);
    expect(await byName("ALPHA", TextFilterMethod.CONTAINS_IGNORE_CASE)).toEqual(["Alpha-one", "alpha-two", "gamma-ALPHA"]);
    expect(await byName("ALPHA", TextFilterMethod.ENDS_WITH)).toEqual(["gamma-ALPHA"]);
    expect(await byName("one", TextFilterMethod.ENDS_WITH_IGNORE_CASE)).toEqual(["Alpha-one", "beta-one"]);

    const inIds = { filter: { case: "inIds" as const, value: { ids } } };
    // ascending order of each column as indexes into specs; equal values (type, flags) tie-break by ID
    const ascending: Record<TargetFieldName, number[]> = {
      [TargetFieldName.UNSPECIFIED]: [0, 1, 2, 3],
      [TargetFieldName.ID]: [0, 1, 2, 3],
      [TargetFieldName.CREATION_DATE]: [0, 1, 2, 3],
      [TargetFieldName.CHANGE_DATE]: changeOrder,
      [TargetFieldName.NAME]: [3, 1, 2, 0],
      [TargetFieldName.TARGET_TYPE]: [0, 2, 1, 3],
      [TargetFieldName.URL]: [2, 3, 0, 1],
      [TargetFieldName.TIMEOUT]: [1, 3, 0, 2],
      [TargetFieldName.ASYNC]: [1, 2, 0, 3],
      [TargetFieldName.INTERRUPT_ON_ERROR]: [0, 2, 3, 1],
    };
    for (const column of Object.values(TargetFieldName).filter((v): v is TargetFieldName => typeof v === "number")) {
      const expected = ascending[column].map((i) => ids[i]);
      const asc = await api.searchTargets({ filters: [inIds], sortingColumn: column, query: { asc: true } });
      const desc = await api.searchTargets({ filters: [inIds], sortingColumn: column });
      expect(asc.sortingColumn).toBe(column);
      expect(
        asc.result.map((r) => r.details!.id),
        `${TargetFieldName[column]} ascending`,
      ).toEqual(expected);
      expect(
        desc.result.map((r) => r.details!.id),
        `${TargetFieldName[column]} descending`,
      ).toEqual([...expected].reverse());
    }
    const sorted = async (column: TargetFieldName) =>
      (await api.searchTargets({ filters: [inIds], sortingColumn: column, query: { asc: true } })).result.map((r) => r.target!);
    expect((await sorted(TargetFieldName.NAME)).map((x) => x.name)).toEqual(["Alpha-one", "alpha-two", "beta-one", "gamma-ALPHA"]);
    expect((await sorted(TargetFieldName.URL)).map((x) => x.targetType.value!.url)).toEqual(["a", "b", "c", "d"].map((h) => `https://${h}.example.com`));
    expect((await sorted(TargetFieldName.TIMEOUT)).map((x) => x.timeout!.seconds)).toEqual([1n, 2n, 3n, 4n]);
    expect((await sorted(TargetFieldName.TARGET_TYPE)).map((x) => x.targetType.case)).toEqual([
      "restRequestResponse",
      "restRequestResponse",
      "restWebhook",
      "restWebhook",
    ]);
    expect((await sorted(TargetFieldName.ASYNC)).map((x) => x.executionType.case === "isAsync")).toEqual([false, false, true, true]);
    expect((await sorted(TargetFieldName.INTERRUPT_ON_ERROR)).map((x) => x.executionType.case === "interruptOnError")).toEqual([false, false, false, true]);
    // default: descending by creation date
    const byDefault = await api.searchTargets({ filters: [inIds] });
    expect(byDefault.result.map((r) => r.details!.id)).toEqual([...ids].reverse());

    const page = await api.searchTargets({ filters: [inIds], query: { offset: 1n, limit: 2, asc: true }, sortingColumn: TargetFieldName.CREATION_DATE });
    expect(page.result.map((r) => r.details!.id)).toEqual(ids.slice(1, 3));
    expect(page.details).toMatchObject({ appliedLimit: 2, totalResult: 4n, endOfList: false });
    expect(page.details!.processedSequence).toBeGreaterThan(0n);
    expect(page.details!.timestamp).toBeDefined();
    const last = await api.searchTargets({ filters: [inIds], query: { offset: 2n, limit: 2 } });
    expect(last.details).toMatchObject({ appliedLimit: 2, totalResult: 4n, endOfList: true });
    expect((await api.searchTargets({ filters: [inIds] })).details!.appliedLimit).toBe(100);
    const tooMany = await expectCode(api.searchTargets({ query: { limit: 1001 } }), Code.InvalidArgument);
    expect(tooMany.rawMessage).toContain("query.limit");
    const longName = await expectCode(
      api.searchTargets({ filters: [{ filter: { case: "name", value: { name: "x".repeat(201), method: 0 } } }] }),
      Code.InvalidArgument,
    );
    expect(longName.rawMessage).toContain("filters[0].name.name");
  });

  it("accept both REST search body forms: a filter array with query parameters, or a request object", async () => {
    const arrayForm = await rest(t.url, "POST", "/resources/v3alpha/targets/_search?query.limit=2&query.asc=true&sorting_column=TARGET_FIELD_NAME_NAME", {
      token: t.adminPat,
      body: [{ name: { name: "alpha", method: "TEXT_FILTER_METHOD_STARTS_WITH_IGNORE_CASE" } }],
    });
    expect(arrayForm.status).toBe(200);
    expect(arrayForm.body.result.map((r: any) => r.target.name)).toEqual(["Alpha-one", "alpha-two"]);
    expect(arrayForm.body.details.appliedLimit).toBe(2);
    const objectForm = await rest(t.url, "POST", "/resources/v3alpha/targets/_search", {
      token: t.adminPat,
      body: {
        filters: [{ name: { name: "alpha", method: "TEXT_FILTER_METHOD_STARTS_WITH_IGNORE_CASE" } }],
        query: { limit: 1, asc: true },
        sorting_column: "TARGET_FIELD_NAME_NAME",
      },
    });
    expect(objectForm.body.result.map((r: any) => r.target.name)).toEqual(["Alpha-one"]);
    expect(objectForm.body.sortingColumn).toBe("TARGET_FIELD_NAME_NAME");
    const bad = await rest(t.url, "POST", "/resources/v3alpha/targets/_search?query.limit=5000", { token: t.adminPat, body: [] });
    expect(bad.status).toBe(400);
  });

  it("need the specification's permissions and the resources flag", async () => {
    const { token } = await t.serviceUser("target-org-owner", [{ type: "org", id: t.defaultOrgId, roles: ["ORG_OWNER"] }]);
    const orgOwner = connectClient(ActionService, t.url, token);
    await expectCode(orgOwner.searchTargets({}), Code.PermissionDenied);
    const { token: viewer } = await t.serviceUser("target-viewer", [{ type: "instance", id: t.instanceId, roles: ["IAM_OWNER_VIEWER"] }]);
    const v = connectClient(ActionService, t.url, viewer);
    await v.searchTargets({});
    await expectCode(
      v.createTarget({ target: { name: "v", targetType: { case: "restWebhook", value: { url: "https://x.example" } }, timeout: { seconds: 1n } } }),
      Code.PermissionDenied,
    );
    const features = connectClient(FeatureService, t.url, t.adminPat);
    await features.setInstanceFeatures({ multitenancyResourcesApi: false });
    try {
      const err = await expectCode(api.searchTargets({}), Code.FailedPrecondition);
      expect(err.rawMessage).toContain("multitenancy_resources_api");
    } finally {
      await features.setInstanceFeatures({ multitenancyResourcesApi: true });
    }
  });
});
