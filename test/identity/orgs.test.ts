import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { CreateOrganizationRequestSchema, GetInstanceDefaultRequestSchema, OrganizationService } from "../../gen/svc/resources/org/v3alpha/org_service_pb.js";
import { call, rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

let t: TestServer;
const req = (method: string, path: string, body?: unknown, token = t.adminPat) =>
  rest(t.url, method, `/resources/v3alpha/organizations${path}`, { token, ...(body !== undefined ? { body } : {}) });

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

describe("organisations", () => {
  it("are created (201) with a generated primary domain, read, renamed, and unique by name", async () => {
    const r = await req("POST", "", { name: "Acme Corp" });
    expect(r.status).toBe(201);
    const id = r.body.details.id;
    expect(r.body.details.resourceOwner).toEqual({ type: "OWNER_TYPE_INSTANCE", id: t.instanceId });
    expect((await req("GET", `/${id}`)).body.organization).toMatchObject({
      name: "Acme Corp",
      state: "ORGANIZATION_STATE_ACTIVE",
      primaryDomain: "acme-corp.localhost",
      isInstanceDefault: false,
    });
    expect((await req("POST", "", { name: "acme corp" })).status).toBe(409);
    expect((await req("POST", "", { name: "" })).body.message).toMatch(/organization\.name/);
    const renamed = await req("PATCH", `/${id}`, { name: "Acme Inc" });
    expect(renamed.status).toBe(200);
    expect((await req("GET", `/${id}`)).body.organization).toMatchObject({ name: "Acme Inc", primaryDomain: "acme-inc.localhost" });
    const unchanged = await req("PATCH", `/${id}`, {});
    expect(unchanged.body.details.sequence).toBe(renamed.body.details.sequence);
  });

  it("over gRPC too; the default organisation is reported and can be moved; it cannot be removed or deactivated", async () => {
    const created = await call(
      "grpc",
      t.url,
      OrganizationService,
      OrganizationService.method.createOrganization,
      create(CreateOrganizationRequestSchema, { organization: { name: "Next Default" } }),
      { token: t.adminPat },
    );
    const id = created.details!.id;
    const before = await call("grpc", t.url, OrganizationService, OrganizationService.method.getInstanceDefault, create(GetInstanceDefaultRequestSchema, {}), {
      token: t.adminPat,
    });
    expect(before.organization!.details!.id).toBe(t.defaultOrgId);
    expect(before.organization!.isInstanceDefault).toBe(true);
    expect((await req("DELETE", `/${t.defaultOrgId}`)).status).toBe(400);
    expect((await req("POST", `/${t.defaultOrgId}/_deactivate`)).status).toBe(400);
    expect((await req("POST", `/${id}/_set_as_instance_default`)).status).toBe(200);
    expect((await req("GET", "/_instance_default")).body.organization.details.id).toBe(id);
    // moved back, so that the rest of the file sees the first default
    expect((await req("POST", `/${t.defaultOrgId}/_set_as_instance_default`)).status).toBe(200);
  });

  it("deactivate and reactivate; search by name, domain and state, scoped to what the caller may read", async () => {
    // created out of name order, so that sorting by name is not sorting by creation
    const c = (await req("POST", "", { name: "Search Gamma" })).body.details.id;
    const a = (await req("POST", "", { name: "Search Alpha" })).body.details.id;
    const b = (await req("POST", "", { name: "Search Beta" })).body.details.id;
    expect((await req("POST", `/${b}/_deactivate`)).status).toBe(200);
    expect((await req("GET", `/${b}`)).body.organization.state).toBe("ORGANIZATION_STATE_INACTIVE");
    const names = (r: { body: { result: { name: string }[] } }) => r.body.result.map((o) => o.name);
    const search = (body: object, token?: string) => req("POST", "/_search", body, token);
    const searchOrgs = { filters: [{ name: { name: "search ", method: "TEXT_FILTER_METHOD_STARTS_WITH_IGNORE_CASE" } }] };
    expect(names(await search({ ...searchOrgs, sortingColumn: "ORGANIZATION_FIELD_NAME_NAME", query: { asc: true } }))).toEqual([
      "Search Alpha",
      "Search Beta",
      "Search Gamma",
    ]);
    expect(names(await search({ ...searchOrgs, sortingColumn: "ORGANIZATION_FIELD_NAME_NAME" }))).toEqual(["Search Gamma", "Search Beta", "Search Alpha"]);
    const byCreation = await search({ ...searchOrgs, sortingColumn: "ORGANIZATION_FIELD_NAME_CREATION_DATE", query: { asc: true } });
    expect(names(byCreation)).toEqual(["Search Gamma", "Search Alpha", "Search Beta"]);
    expect(byCreation.body.result.map((o: { details: { id: string } }) => o.details.id)).toEqual([c, a, b]);
    expect(names(await search({ filters: [{ state: { state: "ORGANIZATION_STATE_INACTIVE" } }] }))).toEqual(["Search Beta"]);
    expect(names(await search({ filters: [{ domain: { domain: "search-alpha.localhost" } }] }))).toEqual(["Search Alpha"]);
    expect((await req("POST", `/${b}/_reactivate`)).status).toBe(200);
    expect(names(await search({ filters: [{ state: { state: "ORGANIZATION_STATE_INACTIVE" } }] }))).toEqual([]);
    const owner = await t.serviceUser("org-alpha-owner", [{ type: "org", id: a, roles: ["ORG_OWNER"] }], a);
    expect(names(await search({}, owner.token))).toEqual(["Search Alpha"]);
    expect((await req("GET", `/${b}`, undefined, owner.token)).status).toBe(403);
    expect((await req("POST", "", { name: "Not Allowed" }, owner.token)).status).toBe(403);
  });

  it("delete removes the organisation with its users", async () => {
    const id = (await req("POST", "", { name: "Short Lived" })).body.details.id;
    const user = await rest(t.url, "POST", `/resources/v3alpha/users?ctx.org_id=${id}`, {
      token: t.adminPat,
      body: { username: "short-lived-user", machine: { name: "temp" } },
    });
    expect(user.status).toBe(201);
    expect((await req("DELETE", `/${id}`)).status).toBe(200);
    expect((await req("GET", `/${id}`)).status).toBe(404);
    expect((await rest(t.url, "GET", `/resources/v3alpha/users/${user.body.details.id}`, { token: t.adminPat })).status).toBe(404);
  });
});
