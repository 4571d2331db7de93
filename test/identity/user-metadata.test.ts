import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ListUserMetadataRequestSchema, SetUserMetadataRequestSchema, UserService } from "../../gen/svc/resources/user/v3alpha/user_service_pb.js";
import { call, rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { addHuman, codeOverHttp, webApp } from "../oidc/rp.js";

// Users' metadata: key -> bytes through the user API, the scope urn:svc:iam:user:metadata, and export/import.
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

const api = (method: string, path: string, body?: unknown, token = t.adminPat) =>
  rest(t.url, method, `/resources/v3alpha${path}`, { token, ...(body ? { body } : {}) });
const b64 = (s: string) => Buffer.from(s).toString("base64");
const SCOPE = "urn:svc:iam:user:metadata";

async function machine(username: string) {
  const m = await api("POST", "/users", { username, machine: { name: username } });
  expect(m.status, JSON.stringify(m.body)).toBe(201);
  return m.body.details.id as string;
}

describe("user metadata", () => {
  it("sets, lists, replaces and removes entries over REST; an unchanged value appends nothing", async () => {
    const id = await machine("meta-a");
    const set = await api("POST", `/users/${id}/metadata`, {
      metadata: [
        { key: "team", value: b64("blue") },
        { key: "cost.center", value: b64("42") },
      ],
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect((await api("GET", `/users/${id}/metadata`)).body.metadata).toEqual([
      { key: "cost.center", value: b64("42") },
      { key: "team", value: b64("blue") },
    ]);
    const events = () => t.server.db.prisma.event.count({ where: { aggregateId: id, type: "user.metadata.set" } });
    expect(await events()).toBe(2);
    const again = await api("POST", `/users/${id}/metadata`, { metadata: [{ key: "team", value: b64("blue") }] });
    expect(again.body.details.sequence).toBe(set.body.details.sequence);
    expect(await events()).toBe(2);
    await api("POST", `/users/${id}/metadata`, { metadata: [{ key: "team", value: b64("red") }] });
    expect((await api("GET", `/users/${id}/metadata`)).body.metadata[1]).toEqual({ key: "team", value: b64("red") });
    expect((await api("DELETE", `/users/${id}/metadata/team`)).status).toBe(200);
    expect((await api("DELETE", `/users/${id}/metadata/team`)).status).toBe(404);
    expect((await api("GET", `/users/${id}/metadata`)).body.metadata).toEqual([{ key: "cost.center", value: b64("42") }]);
  });

  it("refuses bad keys, large values and missing users, naming the field; needs user.write to set", async () => {
    const id = await machine("meta-b");
    const badKey = await api("POST", `/users/${id}/metadata`, { metadata: [{ key: "has space", value: b64("x") }] });
    expect(badKey.status).toBe(400);
    expect(badKey.body.message).toContain("metadata[0].key");
    const big = await api("POST", `/users/${id}/metadata`, { metadata: [{ key: "big", value: Buffer.alloc(65 * 1024).toString("base64") }] });
    expect(big.status).toBe(400);
    expect(big.body.message).toContain("metadata[0].value");
    expect((await api("POST", "/users/nobody/metadata", { metadata: [{ key: "a", value: b64("b") }] })).status).toBe(404);
    const viewer = await t.serviceUser("meta-viewer", [{ type: "org", id: t.defaultOrgId, roles: ["ORG_OWNER_VIEWER"] }]);
    expect((await api("GET", `/users/${id}/metadata`, undefined, viewer.token)).status).toBe(200);
    expect((await api("POST", `/users/${id}/metadata`, { metadata: [{ key: "a", value: b64("b") }] }, viewer.token)).status).toBe(403);
  });

  it("over gRPC; the scope is advertised", async () => {
    const id = await machine("meta-c");
    const opts = { token: t.adminPat };
    await call(
      "grpc",
      t.url,
      UserService,
      UserService.method.setUserMetadata,
      create(SetUserMetadataRequestSchema, { id, metadata: [{ key: "tier", value: new TextEncoder().encode("gold") }] }),
      opts,
    );
    const listed = await call("grpc", t.url, UserService, UserService.method.listUserMetadata, create(ListUserMetadataRequestSchema, { id }), opts);
    expect(new TextDecoder().decode(listed.metadata[0]!.value)).toBe("gold");

    const discovery = (await (await fetch(`${t.url}/.well-known/openid-configuration`)).json()) as { scopes_supported: string[] };
    expect(discovery.scopes_supported).toContain(SCOPE);
  });

  it("in userinfo and introspection of a human's code flow with the scope, not without it", async () => {
    const human = await addHuman(t, "meta-h", "Secr3t!pass");
    await api("POST", `/users/${human}/metadata`, { metadata: [{ key: "dept", value: b64("R&D") }] });
    const app = await webApp(t, { origin: "https://rp.example.com" }, "meta-web");
    const userinfoWith = async (scope: string) => {
      const { code } = await codeOverHttp(
        t,
        { client_id: app.clientId, redirect_uri: "https://rp.example.com/cb", response_type: "code", scope },
        "meta-h",
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
      const info = (await (await fetch(`${t.url}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${access_token}` } })).json()) as Record<
        string,
        unknown
      >;
      const introspected = await fetch(`${t.url}/oauth/v2/introspect`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: `Basic ${Buffer.from(`${app.clientId}:${app.clientSecret}`).toString("base64")}`,
        },
        body: new URLSearchParams({ token: access_token }),
      });
      return { info, introspection: (await introspected.json()) as Record<string, unknown> };
    };
    const claim = { dept: Buffer.from("R&D").toString("base64url") };
    const granted = await userinfoWith(`openid ${SCOPE}`);
    expect(granted.info).toMatchObject({ sub: human, [SCOPE]: claim });
    expect(granted.introspection).toMatchObject({ active: true, [SCOPE]: claim });
    const plain = await userinfoWith("openid");
    expect(plain.info[SCOPE]).toBeUndefined();
    expect(plain.introspection[SCOPE]).toBeUndefined();
  });

  it("travels with the export and import of the organisation, and goes with its user", async () => {
    const id = await machine("meta-d");
    await api("POST", `/users/${id}/metadata`, { metadata: [{ key: "origin", value: b64("legacy") }] });
    const exported = await rest(t.url, "POST", "/admin/v1/export", { token: t.adminPat, body: { orgIds: [t.defaultOrgId], responseOutput: true } });
    expect(exported.status, JSON.stringify(exported.body).slice(0, 300)).toBe(200);
    const data = exported.body;
    const org = data.orgs[0];
    expect(org.userMetadata).toContainEqual({ id, key: "origin", value: b64("legacy") });

    // Removed, then imported again: the metadata comes back with the user.
    expect((await api("DELETE", `/users/${id}`)).status).toBe(200);
    expect(await t.server.db.prisma.userMetadata.count({ where: { userId: id } })).toBe(0);
    const imported = await rest(t.url, "POST", "/admin/v1/import", { token: t.adminPat, body: { dataOrgs: data, timeout: "1m" } });
    expect(imported.status, JSON.stringify(imported.body).slice(0, 500)).toBe(200);
    expect(imported.body.success.orgs[0].userMetadata).toContainEqual({ userId: id, key: "origin" });
    expect((await api("GET", `/users/${id}/metadata`)).body.metadata).toEqual([{ key: "origin", value: b64("legacy") }]);
  });
});
