import { describe, expect, it } from "vitest";
import { ActionService } from "../../gen/svc/resources/action/v3alpha/action_service_pb.js";
import { FeatureService } from "../../gen/svc/feature/v2/feature_service_pb.js";
import { requestJson, restRoutesOf } from "../../src/server/rest-gateway.js";

/** The gateway's mapping from URL and body to the request message, without a server. */
describe("REST transcoding", () => {
  const put = restRoutesOf(ActionService.method.putExecution)[0]!;
  const search = restRoutesOf(ActionService.method.searchTargets)[0]!;
  const orgFeatures = restRoutesOf(FeatureService.method.getOrganizationFeatures)[0]!;

  it("derives method, path, variables and body from google.api.http", () => {
    expect([put.verb, put.template, put.body]).toEqual(["POST", "/resources/v3alpha/executions", "execution"]);
    expect([orgFeatures.verb, orgFeatures.fastifyPath]).toEqual(["GET", "/v2/features/organization/:p0"]);
    expect(orgFeatures.variables.get("p0")).toEqual(["organization_id"]);
  });

  it("binds path variables, nested query names in proto or JSON spelling, repeated parameters, enums by name", () => {
    expect(requestJson(orgFeatures, { inheritance: "true" }, undefined, { p0: "42" })).toEqual({ organizationId: "42", inheritance: true });
    expect(requestJson(put, { "ctx.org_id": "7", "execution.targets": ["a", "b"] }, undefined, {})).toEqual({
      ctx: { orgId: "7" },
      execution: { targets: ["a", "b"] },
    });
    expect(requestJson(search, { "query.limit": "5", "query.asc": "true", sortingColumn: "TARGET_FIELD_NAME_URL", "ctx.instanceId": "1" }, [], {})).toEqual({
      query: { limit: 5, asc: true },
      sortingColumn: "TARGET_FIELD_NAME_URL",
      ctx: { instanceId: "1" },
      filters: [],
    });
    expect(requestJson(search, { sorting_column: "4" }, undefined, {})).toEqual({ sortingColumn: 4 });
  });

  it("takes a search body as the filter array or as the whole request", () => {
    const filters = [{ name: { name: "x" } }];
    expect(requestJson(search, {}, filters, {})).toEqual({ filters });
    expect(requestJson(search, {}, { filters, query: { limit: 1 } }, {})).toEqual({ filters, query: { limit: 1 } });
  });

  it("names what it cannot bind", () => {
    expect(() => requestJson(search, { colour: "red" }, undefined, {})).toThrow(/unknown field "colour"/);
    expect(() => requestJson(search, { "query.limit": "many" }, undefined, {})).toThrow(/query.limit/);
    expect(() => requestJson(search, { "query.limit": ["1", "2"] }, undefined, {})).toThrow(/given 2 times/);
    expect(() => requestJson(search, { "query.asc.x": "1" }, undefined, {})).toThrow(/not a message field/);
  });
});
