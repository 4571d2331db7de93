import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProjectService, SearchProjectGrantsRequestSchema } from "../../gen/svc/resources/project/v3alpha/project_service_pb.js";
import { call, rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { addHuman, codeOverHttp } from "../oidc/rp.js";

// Project grants: a project granted to another organisation with some of its roles.
let t: TestServer;
let orgB: string;
let projectId: string;
const api = (method: string, path: string, body?: unknown, token = t.adminPat) =>
  rest(t.url, method, `/resources/v3alpha${path}`, { token, ...(body ? { body } : {}) });
const ok = async (p: ReturnType<typeof api>, status = 200) => {
  const r = await p;
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  return r.body;
};

beforeAll(async () => {
  t = await startTestServer();
  orgB = await t.org("Partner B");
  projectId = (await ok(api("POST", "/projects", { name: "Granted shop", projectRoleAssertion: true }), 201)).details.id;
  for (const key of ["r1", "r2", "r3"]) await ok(api("POST", `/projects/${projectId}/roles`, { key, displayName: key }), 201);
});
afterAll(() => t?.close());

async function userOfB(username: string, human = false) {
  const body = human
    ? {
        username,
        human: {
          profile: { givenName: "B", familyName: "User" },
          email: { address: `${username}@b.example`, isVerified: true },
          password: { password: "Secr3t!pass" },
        },
      }
    : { username, machine: { name: username } };
  return (await ok(api("POST", `/users?ctx.org_id=${orgB}`, body), 201)).details.id as string;
}

describe("project grants", () => {
  it("grant a subset of roles to another organisation, whose users may then hold only those; keys left out and removed roles cascade", async () => {
    const user = await userOfB("pg-machine");
    // Before any grant: a user of B cannot hold roles of the project.
    const early = await api("POST", "/user_grants", { userId: user, projectId, roleKeys: ["r1"] });
    expect(early.status).toBe(400);
    expect(early.body.message).toContain("not granted");

    const made = await ok(api("POST", `/projects/${projectId}/grants`, { grantedOrganizationId: orgB, roleKeys: ["r1", "r2"] }), 201);
    const grantId = made.details.id as string;
    expect((await api("POST", `/projects/${projectId}/grants`, { grantedOrganizationId: orgB, roleKeys: [] })).status).toBe(409);
    expect((await api("POST", `/projects/${projectId}/grants`, { grantedOrganizationId: t.defaultOrgId, roleKeys: [] })).body.message).toContain(
      "granted_organization_id",
    );
    expect((await api("POST", `/projects/${projectId}/grants`, { grantedOrganizationId: "nope", roleKeys: [] })).status).toBe(404);
    const unknownRole = await api("PATCH", `/projects/${projectId}/grants/${grantId}`, { roleKeys: ["r1", "zz"] });
    expect(unknownRole.body.message).toContain("grant.role_keys[1]");
    expect((await ok(api("GET", `/projects/${projectId}/grants/${grantId}`))).grant).toMatchObject({
      grantedOrganizationId: orgB,
      roleKeys: ["r1", "r2"],
      state: "EFFECTIVE_STATE_ACTIVE",
    });

    const outside = await api("POST", "/user_grants", { userId: user, projectId, roleKeys: ["r1", "r3"] });
    expect(outside.status).toBe(400);
    expect(outside.body.message).toContain("role_keys[1]");
    const userGrant = (await ok(api("POST", "/user_grants", { userId: user, projectId, roleKeys: ["r1", "r2"] }), 201)).details.id as string;
    const keysOf = async () => (await ok(api("GET", `/user_grants/${userGrant}`))).grant.grant.roleKeys;

    // A key left out of the grant leaves the user grants of B's users; a role removed from the project leaves both.
    await ok(api("PATCH", `/projects/${projectId}/grants/${grantId}`, { roleKeys: ["r1"] }));
    expect(await keysOf()).toEqual(["r1"]);
    await ok(api("DELETE", `/projects/${projectId}/roles/r1`));
    expect(await keysOf()).toEqual([]);
    expect((await ok(api("GET", `/projects/${projectId}/grants/${grantId}`))).grant.roleKeys).toEqual([]);

    // Deleting the grant deletes B's user grants on the project.
    await ok(api("DELETE", `/projects/${projectId}/grants/${grantId}`));
    expect((await api("GET", `/user_grants/${userGrant}`)).status).toBe(404);
  });

  it("a deactivated grant's roles leave the tokens of the granted organisation's users", async () => {
    await ok(api("POST", `/projects/${projectId}/roles`, { key: "viewer", displayName: "Viewer" }), 201);
    const grantId = (await ok(api("POST", `/projects/${projectId}/grants`, { grantedOrganizationId: orgB, roleKeys: ["viewer"] }), 201)).details.id;
    const user = await userOfB("pg-human", true);
    await ok(api("POST", "/user_grants", { userId: user, projectId, roleKeys: ["viewer"] }), 201);
    const app = await ok(
      api("POST", `/projects/${projectId}/applications`, {
        name: "granted-web",
        oidc: { redirectUris: ["https://rp.example.com/cb"], appType: "OIDC_APP_TYPE_WEB", authMethodType: "OIDC_AUTH_METHOD_TYPE_BASIC" },
      }),
      201,
    );
    const userinfo = async () => {
      const { code } = await codeOverHttp(
        t,
        { client_id: app.clientId, redirect_uri: "https://rp.example.com/cb", response_type: "code", scope: "openid urn:svc:iam:org:project:roles" },
        "pg-human",
        "Secr3t!pass",
      );
      const tokens = await fetch(`${t.url}/oauth/v2/token`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: `Basic ${Buffer.from(`${app.clientId}:${app.clientSecret}`).toString("base64")}`,
        },
        body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: "https://rp.example.com/cb" }),
      });
      const { access_token } = (await tokens.json()) as { access_token: string };
      return (await (await fetch(`${t.url}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${access_token}` } })).json()) as Record<string, unknown>;
    };
    // The role names the user's organisation, as ZITADEL's claim does.
    expect((await userinfo())["urn:svc:iam:org:project:roles"]).toEqual({ viewer: { [orgB]: expect.any(String) } });
    await ok(api("POST", `/projects/${projectId}/grants/${grantId}/_deactivate`));
    expect((await userinfo())["urn:svc:iam:org:project:roles"]).toBeUndefined();
    await ok(api("POST", `/projects/${projectId}/grants/${grantId}/_reactivate`));
    expect((await userinfo())["urn:svc:iam:org:project:roles"]).toEqual({ viewer: { [orgB]: expect.any(String) } });
  });

  it("project_role_check: only users with a grant of the project sign in to its applications", async () => {
    const checked = (await ok(api("POST", "/projects", { name: "checked", projectRoleCheck: true }), 201)).details.id;
    await ok(api("POST", `/projects/${checked}/roles`, { key: "member", displayName: "Member" }), 201);
    const oidc = { redirectUris: ["https://rp.example.com/cb"], appType: "OIDC_APP_TYPE_WEB", authMethodType: "OIDC_AUTH_METHOD_TYPE_BASIC" };
    const app = await ok(api("POST", `/projects/${checked}/applications`, { name: "checked-web", oidc }), 201);
    const userId = await addHuman(t, "rc-human", "Secr3t!pass");
    const params = { client_id: app.clientId, redirect_uri: "https://rp.example.com/cb", response_type: "code", scope: "openid", state: "s1" };
    const refused = await codeOverHttp(t, params, "rc-human", "Secr3t!pass");
    expect(refused.code).toBe("");
    const answer = new URL(refused.location);
    expect(`${answer.origin}${answer.pathname}`).toBe("https://rp.example.com/cb");
    expect(Object.fromEntries(answer.searchParams)).toMatchObject({ error: "access_denied", state: "s1" });
    await ok(api("POST", "/user_grants", { userId, projectId: checked, roleKeys: ["member"] }), 201);
    expect((await codeOverHttp(t, params, "rc-human", "Secr3t!pass")).code).not.toBe("");
  });

  it("searches show the grants of the caller's projects and those made to its organisation; outsiders are refused; gRPC", async () => {
    const ownerB = await t.serviceUser("pg-owner-b", [{ type: "org", id: orgB, roles: ["ORG_OWNER"] }], orgB);
    const seenByB = await ok(api("POST", "/project_grants/_search", {}, ownerB.token));
    expect(seenByB.result.map((g: { grantedOrganizationId: string }) => g.grantedOrganizationId)).toEqual([orgB]);
    // B may not change A's grants.
    const id = seenByB.result[0].id as string;
    expect((await api("POST", `/projects/${projectId}/grants/${id}/_deactivate`, undefined, ownerB.token)).status).toBe(403);
    const orgC = await t.org("Outsider C");
    const ownerC = await t.serviceUser("pg-owner-c", [{ type: "org", id: orgC, roles: ["ORG_OWNER"] }], orgC);
    expect((await ok(api("POST", "/project_grants/_search", {}, ownerC.token))).result).toEqual([]);
    const grpc = await call(
      "grpc",
      t.url,
      ProjectService,
      ProjectService.method.searchProjectGrants,
      create(SearchProjectGrantsRequestSchema, { filters: [{ filter: { case: "projectId", value: projectId } }] }),
      { token: t.adminPat },
    );
    expect(grpc.result.map((g) => g.grantedOrganizationId)).toEqual([orgB]);
  });

  it("grant members: users of the granted organisation manage its users' grants on the project, within the grant's roles", async () => {
    const project = (await ok(api("POST", "/projects", { name: "Member-managed shop" }), 201)).details.id as string;
    for (const key of ["m1", "m2"]) await ok(api("POST", `/projects/${project}/roles`, { key, displayName: key }), 201);
    const grantId = (await ok(api("POST", `/projects/${project}/grants`, { grantedOrganizationId: orgB, roleKeys: ["m1"] }), 201)).details.id as string;
    const manager = await t.serviceUser("pg-grant-manager", [], orgB);
    const customer = await userOfB("pg-grant-customer");
    const ownOrgUser = (await ok(api("POST", "/users", { username: "pg-own-org-user", machine: { name: "own" } }), 201)).details.id as string;

    // Before the membership: nothing.
    expect((await api("POST", "/user_grants", { userId: customer, projectId: project, roleKeys: ["m1"] }, manager.token)).status).toBe(403);
    // Members are the granted organisation's users, with the grant roles.
    expect((await api("GET", `/memberships/_available_roles?projectGrantId=${grantId}`)).body.roles).toEqual([
      "PROJECT_GRANT_OWNER",
      "PROJECT_GRANT_OWNER_VIEWER",
    ]);
    const outsider = await api("POST", "/memberships", { userId: ownOrgUser, context: { projectGrantId: grantId }, roles: ["PROJECT_GRANT_OWNER"] });
    expect(outsider.status).toBe(400);
    expect(outsider.body.message).toContain("membership.user_id");
    expect((await api("POST", "/memberships", { userId: manager.userId, context: { projectGrantId: grantId }, roles: ["PROJECT_OWNER"] })).status).toBe(400);
    const membership = await ok(
      api("POST", "/memberships", { userId: manager.userId, context: { projectGrantId: grantId }, roles: ["PROJECT_GRANT_OWNER"] }),
      201,
    );
    expect(membership.details.id).toBe(`project_grant:${grantId}:${manager.userId}`);

    // Now the member grants the grant's roles to its organisation's users, and only those.
    const made = await ok(api("POST", "/user_grants", { userId: customer, projectId: project, roleKeys: ["m1"] }, manager.token), 201);
    expect((await api("POST", "/user_grants", { userId: ownOrgUser, projectId: project, roleKeys: ["m1"] }, manager.token)).status).toBe(403);
    expect((await api("PATCH", `/user_grants/${made.details.id}`, { roleKeys: ["m2"] }, manager.token)).status).toBe(400);
    const seen = await ok(api("POST", "/user_grants/_search", {}, manager.token));
    expect(seen.result.map((g: { details: { id: string } }) => g.details.id)).toEqual([made.details.id]);
    expect((await ok(api("POST", "/project_grants/_search", {}, manager.token))).result.map((g: { id: string }) => g.id)).toEqual([grantId]);
    const members = await ok(api("POST", "/memberships/_search", {}, manager.token));
    expect(members.result.map((m: { membership: { userId: string } }) => m.membership.userId)).toEqual([manager.userId]);

    // A deactivated grant gives its members nothing; a deleted one takes its members with it.
    await ok(api("POST", `/projects/${project}/grants/${grantId}/_deactivate`));
    expect((await api("DELETE", `/user_grants/${made.details.id}`, undefined, manager.token)).status).toBe(403);
    await ok(api("DELETE", `/projects/${project}/grants/${grantId}`));
    expect((await api("GET", `/memberships/${membership.details.id}`)).status).toBe(404);
  });
});
