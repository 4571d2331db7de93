import { createPrivateKey, createPublicKey, sign, verify } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApplicationService, CreateApplicationRequestSchema } from "../../gen/svc/resources/application/v3alpha/application_service_pb.js";
import {
  ListAvailableRolesRequestSchema,
  MembershipService,
  SearchMembershipsRequestSchema,
} from "../../gen/svc/resources/membership/v3alpha/membership_service_pb.js";
import { CreateProjectRequestSchema, GetProjectRequestSchema, ProjectService } from "../../gen/svc/resources/project/v3alpha/project_service_pb.js";
import {
  CreateUserGrantRequestSchema,
  SearchUserGrantsRequestSchema,
  UserGrantService,
} from "../../gen/svc/resources/usergrant/v3alpha/user_grant_service_pb.js";
import { verifyPassword } from "../../src/crypto/password.js";
import { call, rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

let t: TestServer;
let orgA: string;
let projectId: string;
let userId: string;

const api = (method: string, path: string, body?: unknown, token = t.adminPat) =>
  rest(t.url, method, `/resources/v3alpha${path}`, { token, ...(body !== undefined ? { body } : {}) });
const created = async (p: Promise<{ status: number; body: any }>) => {
  const r = await p;
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
};
const oidc = (extra: object = {}) => ({
  name: `web-${Math.random().toString(36).slice(2, 8)}`,
  oidc: { redirectUris: ["https://app.example.com/callback"], appType: "OIDC_APP_TYPE_WEB", authMethodType: "OIDC_AUTH_METHOD_TYPE_BASIC", ...extra },
});

beforeAll(async () => {
  t = await startTestServer();
  orgA = await t.org("Projects A");
  projectId = (await created(api("POST", `/projects?ctx.org_id=${orgA}`, { name: "Shop", projectRoleAssertion: true }))).details.id;
  userId = (await created(api("POST", `/users?ctx.org_id=${orgA}`, { username: "grantee", machine: { name: "Grantee" } }))).details.id;
});
afterAll(() => t?.close());

describe("projects and roles", () => {
  it("are created, read, patched without change, unique by name in the organisation, and searched", async () => {
    const p = (await api("GET", `/projects/${projectId}`)).body.project;
    expect(p).toMatchObject({
      project: { name: "Shop", projectRoleAssertion: true, projectRoleCheck: false },
      state: "PROJECT_STATE_ACTIVE",
      details: { resourceOwner: { id: orgA } },
    });
    expect((await api("POST", `/projects?ctx.org_id=${orgA}`, { name: "Shop" })).status).toBe(409);
    const patched = await api("PATCH", `/projects/${projectId}`, { projectRoleCheck: true });
    const again = await api("PATCH", `/projects/${projectId}`, { projectRoleCheck: true });
    expect(again.body.details.sequence).toBe(patched.body.details.sequence);
    expect((await api("POST", `/projects/${projectId}/_deactivate`)).status).toBe(200);
    expect((await api("GET", `/projects/${projectId}`)).body.project.state).toBe("PROJECT_STATE_INACTIVE");
    expect((await api("POST", `/projects/${projectId}/_reactivate`)).status).toBe(200);
    const found = await api("POST", "/projects/_search", { filters: [{ name: { name: "sho", method: "TEXT_FILTER_METHOD_STARTS_WITH_IGNORE_CASE" } }] });
    expect(found.body.result.map((x: any) => x.details.id)).toEqual([projectId]);
  });

  it("hold roles with unique keys that can be changed and removed", async () => {
    await created(api("POST", `/projects/${projectId}/roles`, { key: "reader", displayName: "Reader", group: "basic" }));
    await created(api("POST", `/projects/${projectId}/roles`, { key: "writer" }));
    expect((await api("POST", `/projects/${projectId}/roles`, { key: "reader" })).status).toBe(409);
    expect((await api("POST", `/projects/${projectId}/roles`, { key: "no spaces" })).body.message).toMatch(/role\.key/);
    expect((await api("PATCH", `/projects/${projectId}/roles/writer`, { displayName: "Writer" })).status).toBe(200);
    const roles = await api("POST", `/projects/${projectId}/roles/_search`, { query: { asc: true } });
    expect(roles.body.result).toEqual([
      { key: "reader", displayName: "Reader", group: "basic" },
      { key: "writer", displayName: "Writer", group: "" },
    ]);
    expect((await api("DELETE", `/projects/${projectId}/roles/nope`)).status).toBe(404);
  });
});

describe("applications", () => {
  it("an OIDC web app gets a client ID and a secret shown once, stored hashed", async () => {
    const r = await created(
      api(
        "POST",
        `/projects/${projectId}/applications`,
        oidc({ grantTypes: ["OIDC_GRANT_TYPE_AUTHORIZATION_CODE", "OIDC_GRANT_TYPE_REFRESH_TOKEN"], postLogoutRedirectUris: ["https://app.example.com/bye"] }),
      ),
    );
    expect(r.clientId).toMatch(/^\d+@shop$/);
    expect(r.clientSecret.length).toBeGreaterThanOrEqual(43);
    const app = (await api("GET", `/applications/${r.details.id}`)).body.application;
    expect(app).toMatchObject({
      projectId,
      clientId: r.clientId,
      hasSecret: true,
      state: "APPLICATION_STATE_ACTIVE",
      application: {
        oidc: {
          responseTypes: ["OIDC_RESPONSE_TYPE_CODE"],
          grantTypes: ["OIDC_GRANT_TYPE_AUTHORIZATION_CODE", "OIDC_GRANT_TYPE_REFRESH_TOKEN"],
          redirectUris: ["https://app.example.com/callback"],
        },
      },
    });
    expect(JSON.stringify(app)).not.toContain(r.clientSecret);
    const row = await t.server.db.prisma.application.findUniqueOrThrow({ where: { id: r.details.id } });
    expect((await verifyPassword(r.clientSecret, row.secretHash!)).valid).toBe(true);
    const renewed = await api("POST", `/applications/${r.details.id}/_generate_secret`);
    expect(renewed.body.clientSecret).not.toBe(r.clientSecret);
    const fresh = await t.server.db.prisma.application.findUniqueOrThrow({ where: { id: r.details.id } });
    expect((await verifyPassword(r.clientSecret, fresh.secretHash!)).valid).toBe(false);
  });

  it("refuses configurations that break the OAuth rules, naming the field", async () => {
    const cases: [object, RegExp][] = [
      [oidc({ redirectUris: ["http://app.example.com/cb"] }), /redirect_uris\[0\]: web apps need https/],
      [oidc({ redirectUris: ["https://app.example.com/cb#frag"] }), /redirect_uris\[0\]: must not have a fragment/],
      [oidc({ redirectUris: ["not a uri"] }), /redirect_uris\[0\]: must be a URI/],
      [oidc({ responseTypes: ["OIDC_RESPONSE_TYPE_ID_TOKEN"] }), /response_types|grant_types/],
      [oidc({ appType: "OIDC_APP_TYPE_NATIVE" }), /auth_method_type: native apps cannot keep a secret/],
      [oidc({ grantTypes: ["OIDC_GRANT_TYPE_REFRESH_TOKEN"] }), /response_types|grant_types/],
      [oidc({ redirectUris: [] }), /redirect_uris: at least one/],
    ];
    for (const [body, message] of cases) {
      const r = await api("POST", `/projects/${projectId}/applications`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.message).toMatch(message);
    }
    // allowed: http on localhost, native apps with private schemes and PKCE, dev mode
    await created(api("POST", `/projects/${projectId}/applications`, oidc({ redirectUris: ["http://localhost:3000/cb"] })));
    await created(
      api(
        "POST",
        `/projects/${projectId}/applications`,
        oidc({ appType: "OIDC_APP_TYPE_NATIVE", authMethodType: "OIDC_AUTH_METHOD_TYPE_NONE", redirectUris: ["com.example.app:/cb"] }),
      ),
    );
    await created(api("POST", `/projects/${projectId}/applications`, oidc({ devMode: true, redirectUris: ["http://dev.example.com/cb"] })));
  });

  it("implicit and PKCE apps, over gRPC; a public client has no secret", async () => {
    const req = create(CreateApplicationRequestSchema, {
      projectId,
      application: {
        name: "spa",
        type: {
          case: "oidc",
          value: { redirectUris: ["https://spa.example.com/cb"], responseTypes: [2, 3], grantTypes: [2], appType: 2, authMethodType: 3 },
        },
      },
    });
    const r = await call("grpc", t.url, ApplicationService, ApplicationService.method.createApplication, req, { token: t.adminPat });
    expect(r.clientSecret).toBe("");
    const app = (await api("GET", `/applications/${r.details!.id}`)).body.application;
    expect(app).toMatchObject({
      hasSecret: false,
      application: {
        oidc: { responseTypes: ["OIDC_RESPONSE_TYPE_ID_TOKEN", "OIDC_RESPONSE_TYPE_ID_TOKEN_TOKEN"], authMethodType: "OIDC_AUTH_METHOD_TYPE_NONE" },
      },
    });
    expect((await api("POST", `/applications/${r.details!.id}/_generate_secret`)).status).toBe(400);
  });

  it("an API app with private_key_jwt gets keys as JSON key files; the type cannot change; delete", async () => {
    const r = await created(
      api("POST", `/projects/${projectId}/applications`, { name: "backend", api: { authMethodType: "API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT" } }),
    );
    expect(r.clientSecret).toBe("");
    const key = await created(api("POST", `/applications/${r.details.id}/keys`, {}));
    const file = JSON.parse(key.keyContent);
    expect(file).toMatchObject({ type: "application", keyId: key.keyId, appId: r.details.id, clientId: r.clientId });
    const stored = await t.server.db.prisma.applicationKey.findUniqueOrThrow({ where: { id: key.keyId } });
    expect(verify("sha256", Buffer.from("x"), createPublicKey(stored.publicKey), sign("sha256", Buffer.from("x"), createPrivateKey(file.key)))).toBe(true);
    // listed (so that a key can be found to remove), with its dates and no key material
    const later = await created(api("POST", `/applications/${r.details.id}/keys`, { expirationDate: "2099-01-01T00:00:00Z" }));
    const listed = await api("GET", `/applications/${r.details.id}/keys`);
    expect(listed.status).toBe(200);
    expect(listed.body.result.map((k: { id: string }) => k.id)).toEqual([key.keyId, later.keyId]);
    expect(listed.body.result[1].expirationDate).toBe("2099-01-01T00:00:00Z");
    expect(listed.body.result[0].expirationDate).toBeUndefined();
    expect(JSON.stringify(listed.body)).not.toContain("BEGIN");
    expect((await api("DELETE", `/applications/${r.details.id}/keys/${later.keyId}`)).status).toBe(200);
    expect((await api("PATCH", `/applications/${r.details.id}`, { oidc: { redirectUris: ["https://x.example.com"] } })).status).toBe(400);
    expect((await api("PATCH", `/applications/${r.details.id}`, { name: "backend-2" })).status).toBe(200);
    expect((await api("DELETE", `/applications/${r.details.id}/keys/${key.keyId}`)).status).toBe(200);
    expect((await api("DELETE", `/applications/${r.details.id}`)).status).toBe(200);
    expect((await api("GET", `/applications/${r.details.id}`)).status).toBe(404);
  });
});

describe("memberships and user grants", () => {
  it("a membership made through the API gives its roles' permissions; context and user are unique", async () => {
    const owner = await t.serviceUser("future-owner", [], orgA);
    expect((await api("GET", `/projects/${projectId}`, undefined, owner.token)).status).toBe(403);
    const m = await created(api("POST", "/memberships", { userId: owner.userId, context: { organizationId: orgA }, roles: ["ORG_OWNER"] }));
    expect(m.details.id).toBe(`org:${orgA}:${owner.userId}`);
    expect((await api("POST", "/memberships", { userId: owner.userId, context: { organizationId: orgA }, roles: ["ORG_OWNER"] })).status).toBe(409);
    expect((await api("GET", `/projects/${projectId}`, undefined, owner.token)).status).toBe(200);
    expect((await api("PATCH", `/memberships/${m.details.id}`, { roles: ["ORG_OWNER_VIEWER"] })).status).toBe(200);
    expect((await api("GET", `/memberships/${m.details.id}`)).body.membership.membership).toEqual({
      userId: owner.userId,
      context: { organizationId: orgA },
      roles: ["ORG_OWNER_VIEWER"],
    });
    expect((await api("PATCH", `/projects/${projectId}`, { name: "Renamed" }, owner.token)).status).toBe(403);
    expect((await api("DELETE", `/memberships/${m.details.id}`)).status).toBe(200);
    expect((await api("GET", `/projects/${projectId}`, undefined, owner.token)).status).toBe(403);
    expect((await api("POST", "/memberships", { userId: owner.userId, context: { organizationId: orgA }, roles: ["IAM_OWNER"] })).body.message).toMatch(
      /membership\.roles\[0\]: "IAM_OWNER" is not a org role/,
    );
  });

  it("a project membership lets its holder manage that project only", async () => {
    const other = (await created(api("POST", `/projects?ctx.org_id=${orgA}`, { name: "Other" }))).details.id;
    const pm = await t.serviceUser("project-manager", [], orgA);
    await created(api("POST", "/memberships", { userId: pm.userId, context: { projectId }, roles: ["PROJECT_OWNER"] }));
    expect((await api("GET", `/projects/${projectId}`, undefined, pm.token)).status).toBe(200);
    expect((await api("GET", `/projects/${other}`, undefined, pm.token)).status).toBe(403);
    await created(api("POST", `/projects/${projectId}/applications`, oidc(), pm.token));
    const mine = await api("POST", "/projects/_search", {}, pm.token);
    expect(mine.body.result.map((x: any) => x.details.id)).toEqual([projectId]);
  });

  it("ListAvailableRoles answers per context", async () => {
    const list = (query: string) => api("GET", `/memberships/_available_roles${query}`);
    expect((await list("")).body.roles).toContain("IAM_OWNER");
    expect((await list(`?ctx.org_id=${orgA}`)).body.roles).toEqual(expect.arrayContaining(["ORG_OWNER", "ORG_USER_MANAGER"]));
    expect((await list(`?project_id=${projectId}`)).body.roles).toEqual(["PROJECT_OWNER"]);
    const grpc = await call(
      "grpc",
      t.url,
      MembershipService,
      MembershipService.method.listAvailableRoles,
      create(ListAvailableRolesRequestSchema, { projectId }),
      { token: t.adminPat },
    );
    expect(grpc.roles).toEqual(["PROJECT_OWNER"]);
  });

  it("user grants hold existing role keys, are unique per user and project, and lose removed roles", async () => {
    const g = await created(api("POST", "/user_grants", { userId, projectId, roleKeys: ["reader", "writer"] }));
    expect((await api("POST", "/user_grants", { userId, projectId, roleKeys: ["reader"] })).status).toBe(409);
    expect((await api("POST", "/user_grants", { userId: t.defaultOrgId, projectId, roleKeys: [] })).status).toBe(404);
    const other = (await created(api("POST", `/users?ctx.org_id=${orgA}`, { username: "grantee-2", machine: { name: "G2" } }))).details.id;
    expect((await api("POST", "/user_grants", { userId: other, projectId, roleKeys: ["admin"] })).body.message).toMatch(
      /grant\.role_keys\[0\]: the project has no role "admin"/,
    );
    expect((await api("DELETE", `/projects/${projectId}/roles/writer`)).status).toBe(200);
    expect((await api("GET", `/user_grants/${g.details.id}`)).body.grant.grant.roleKeys).toEqual(["reader"]);
    const found = await api("POST", "/user_grants/_search", { filters: [{ roleKey: "reader" }] });
    expect(found.body.result.map((x: any) => x.details.id)).toEqual([g.details.id]);
    expect((await api("PATCH", `/user_grants/${g.details.id}`, { roleKeys: [] })).status).toBe(200);
    expect((await api("DELETE", `/user_grants/${g.details.id}`)).status).toBe(200);
  });

  it("projects, grants and memberships over gRPC too", async () => {
    const opts = { token: t.adminPat };
    const created = await call(
      "grpc",
      t.url,
      ProjectService,
      ProjectService.method.createProject,
      create(CreateProjectRequestSchema, { ctx: { owner: { case: "orgId", value: orgA } }, project: { name: "Over gRPC" } }),
      opts,
    );
    const got = await call("grpc", t.url, ProjectService, ProjectService.method.getProject, create(GetProjectRequestSchema, { id: created.details!.id }), opts);
    expect(got.project!.project!.name).toBe("Over gRPC");
    expect((await api("POST", `/projects/${created.details!.id}/roles`, { key: "viewer" })).status).toBe(201);
    const grant = await call(
      "grpc",
      t.url,
      UserGrantService,
      UserGrantService.method.createUserGrant,
      create(CreateUserGrantRequestSchema, { grant: { userId, projectId: created.details!.id, roleKeys: ["viewer"] } }),
      opts,
    );
    const found = await call(
      "grpc",
      t.url,
      UserGrantService,
      UserGrantService.method.searchUserGrants,
      create(SearchUserGrantsRequestSchema, { filters: [{ filter: { case: "projectId", value: created.details!.id } }] }),
      opts,
    );
    expect(found.result.map((g) => g.details!.id)).toEqual([grant.details!.id]);
    const members = await call(
      "grpc",
      t.url,
      MembershipService,
      MembershipService.method.searchMemberships,
      create(SearchMembershipsRequestSchema, { filters: [{ filter: { case: "context", value: { context: { case: "instance", value: true } } } }] }),
      opts,
    );
    expect(members.result.length).toBeGreaterThanOrEqual(2); // the first start's admin and service user
  });

  it("deleting a project removes its applications, grants and memberships", async () => {
    const p = (await created(api("POST", `/projects?ctx.org_id=${orgA}`, { name: "Doomed" }))).details.id;
    await created(api("POST", `/projects/${p}/roles`, { key: "r" }));
    const app = (await created(api("POST", `/projects/${p}/applications`, oidc()))).details.id;
    await created(api("POST", "/user_grants", { userId, projectId: p, roleKeys: ["r"] }));
    await created(api("POST", "/memberships", { userId, context: { projectId: p }, roles: ["PROJECT_OWNER"] }));
    expect((await api("DELETE", `/projects/${p}`)).status).toBe(200);
    expect((await api("GET", `/applications/${app}`)).status).toBe(404);
    expect(await t.server.db.prisma.userGrant.count({ where: { projectId: p } })).toBe(0);
    expect(await t.server.db.prisma.membership.count({ where: { contextId: p } })).toBe(0);
  });
});
