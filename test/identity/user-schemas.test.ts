import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CreateUserSchemaRequestSchema, UserSchemaService } from "../../gen/svc/resources/userschema/v3alpha/user_schema_service_pb.js";
import { call, expectCode, rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

// User schemas (JSON Schema) and users created with one.
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

const api = (method: string, path: string, body?: unknown, token = t.adminPat) =>
  rest(t.url, method, `/resources/v3alpha${path}`, { token, ...(body ? { body } : {}) });
const employee = {
  type: "object",
  properties: {
    employeeId: { type: "integer", minimum: 1 },
    email: { type: "string", format: "email" },
    address: { type: "object", properties: { city: { type: "string" } } },
  },
  required: ["employeeId"],
};

async function schema(type: string, body = employee) {
  const r = await api("POST", "/user_schemas", { type, schema: body, possibleAuthenticators: ["AUTHENTICATOR_TYPE_PASSWORD"] });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.details.id as string;
}
const machine = (username: string, extra: object) => api("POST", "/users", { username, machine: { name: username }, ...extra });

describe("user schemas", () => {
  it("are created, read, searched and patched; a changed schema is a new revision", async () => {
    const id = await schema("employee");
    const got = await api("GET", `/user_schemas/${id}`);
    expect(got.body.userSchema).toMatchObject({
      config: { type: "employee", schema: employee, possibleAuthenticators: ["AUTHENTICATOR_TYPE_PASSWORD"] },
      state: "EFFECTIVE_STATE_ACTIVE",
      revision: 1,
    });
    expect((await api("POST", "/user_schemas", { type: "employee", schema: employee })).status).toBe(409);
    const found = await api("POST", "/user_schemas/_search", { filters: [{ type: "employee" }] });
    expect(found.body.result.map((s: { details: { id: string } }) => s.details.id)).toEqual([id]);

    expect((await api("PATCH", `/user_schemas/${id}`, { possibleAuthenticators: ["AUTHENTICATOR_TYPE_PASSWORD", "AUTHENTICATOR_TYPE_TOTP"] })).status).toBe(
      200,
    );
    expect((await api("GET", `/user_schemas/${id}`)).body.userSchema.revision).toBe(1);
    const v2 = { ...employee, required: ["employeeId", "email"] };
    expect((await api("PATCH", `/user_schemas/${id}`, { schema: v2 })).status).toBe(200);
    expect((await api("GET", `/user_schemas/${id}`)).body.userSchema.revision).toBe(2);
  });

  it("refuse schemas that are not JSON Schemas, naming the field and Ajv's reason; remote references never load", async () => {
    const bad = await api("POST", "/user_schemas", { type: "broken", schema: { type: "objekt" } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain("user_schema.schema");
    const remote = await api("POST", "/user_schemas", { type: "remote", schema: { $ref: "https://example.com/schema.json" } });
    expect(remote.status).toBe(400);
    expect(remote.body.message).toContain("can't resolve reference");
    expect((await api("POST", "/user_schemas", { type: "bad type!", schema: {} })).status).toBe(400);
  });

  it("users are created and patched with data valid against the current revision; errors name the JSON path", async () => {
    const id = await schema("contractor");
    const ok = await machine("schema-u1", { schemaId: id, data: { employeeId: 7, address: { city: "Bern" } } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    const user = (await api("GET", `/users/${ok.body.details.id}`)).body.user;
    expect(user).toMatchObject({ schemaId: id, schemaRevision: "1", data: { employeeId: 7, address: { city: "Bern" } } });

    const wrongType = await machine("schema-u2", { schemaId: id, data: { employeeId: 7, address: { city: 5 } } });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.message).toContain("data.address.city");
    const missing = await machine("schema-u3", { schemaId: id, data: {} });
    expect(missing.body.message).toContain("data.employeeId");
    const format = await machine("schema-u4", { schemaId: id, data: { employeeId: 1, email: "nope" } });
    expect(format.body.message).toContain("data.email");
    // Nothing was created by the refused requests.
    expect(await t.server.db.prisma.user.count({ where: { username: { in: ["schema-u2", "schema-u3", "schema-u4"] } } })).toBe(0);
    expect((await machine("schema-u5", { data: { employeeId: 1 } })).body.message).toContain("schema_id");
    expect((await machine("schema-u6", { schemaId: "nope", data: {} })).status).toBe(404);

    // A new revision applies to the next change of a user's data.
    await api("PATCH", `/user_schemas/${id}`, { schema: { ...employee, required: ["employeeId", "email"] } });
    const patchBad = await api("PATCH", `/users/${ok.body.details.id}`, { schemaId: id, data: { employeeId: 8 } });
    expect(patchBad.status).toBe(400);
    expect(patchBad.body.message).toContain("data.email");
    expect((await api("PATCH", `/users/${ok.body.details.id}`, { schemaId: id, data: { employeeId: 8, email: "c@example.com" } })).status).toBe(200);
    expect((await api("GET", `/users/${ok.body.details.id}`)).body.user).toMatchObject({
      schemaRevision: "2",
      data: { employeeId: 8, email: "c@example.com" },
    });

    // In use: cannot be deleted; inactive: no new user may use it.
    expect((await api("DELETE", `/user_schemas/${id}`)).status).toBe(400);
    expect((await api("POST", `/user_schemas/${id}/_deactivate`)).status).toBe(200);
    const inactive = await machine("schema-u7", { schemaId: id, data: { employeeId: 1, email: "d@example.com" } });
    expect(inactive.status).toBe(400);
    expect(inactive.body.message).toContain("inactive");
    expect((await api("POST", `/user_schemas/${id}/_reactivate`)).status).toBe(200);
    expect((await api("DELETE", `/users/${ok.body.details.id}`)).status).toBe(200);
    expect((await api("DELETE", `/user_schemas/${id}`)).status).toBe(200);
  });

  it("over gRPC; an organisation owner may not manage them", async () => {
    const r = await call(
      "grpc",
      t.url,
      UserSchemaService,
      UserSchemaService.method.createUserSchema,
      create(CreateUserSchemaRequestSchema, { userSchema: { type: "grpc-made", schema: { type: "object" } } }),
      { token: t.adminPat },
    );
    expect(r.details?.id).toBeTruthy();
    const orgOwner = await t.serviceUser("schema-org-owner", [{ type: "org", id: t.defaultOrgId, roles: ["ORG_OWNER"] }]);
    expect((await api("POST", "/user_schemas", { type: "x", schema: {} }, orgOwner.token)).status).toBe(403);
    await expectCode(
      call(
        "grpc",
        t.url,
        UserSchemaService,
        UserSchemaService.method.createUserSchema,
        create(CreateUserSchemaRequestSchema, { userSchema: { type: "y", schema: {} } }),
        {
          token: orgOwner.token,
        },
      ),
      Code.PermissionDenied,
    );
  });
});
