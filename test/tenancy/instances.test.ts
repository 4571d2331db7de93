import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

// Instances through the system API: each serves its own Hosts with its own administrator, keys and tokens.
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

const api = (method: string, path: string, opts: { body?: unknown; token?: string; host?: string } = {}) =>
  rest(t.url, method, `/resources/v3alpha${path}`, {
    token: opts.token ?? t.adminPat,
    ...(opts.body ? { body: opts.body } : {}),
    ...(opts.host ? { host: opts.host } : {}),
  });
const hostOf = (domain: string) => `${domain}:${t.port}`;
const form = (host: string, path: string, body: Record<string, string>, basic: [string, string]) =>
  rest(t.url, "POST", path, {
    host,
    body: new URLSearchParams(body).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${Buffer.from(`${basic[0]}:${basic[1]}`).toString("base64")}` },
  });

/** An API application on the Host's instance, to introspect with: its credentials and its project. */
async function introspector(host: string, token: string): Promise<[string, string, string]> {
  const project = await api("POST", "/projects", { host, token, body: { name: "introspection" } });
  const app = await api("POST", `/projects/${project.body.details.id}/applications`, {
    host,
    token,
    body: { name: "rs", api: { authMethodType: "API_AUTH_METHOD_TYPE_BASIC" } },
  });
  expect(app.status, JSON.stringify(app.body)).toBe(201);
  return [app.body.clientId, app.body.clientSecret, project.body.details.id];
}

describe("instances", () => {
  it("a second instance serves its own Host with its own administrator, signing keys and tokens, and goes when deleted", async () => {
    const made = await api("POST", "/instances", {
      body: { name: "Second", domains: ["second.test"], firstOrgName: "Acme", machine: { username: "ops", name: "Ops" } },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const id = made.body.details.id as string;
    const pat = made.body.pat as string;
    expect(pat).toBeTruthy();
    const second = hostOf("second.test");

    // Its administrator works on its Host, and not on the first instance's.
    const users = await api("POST", "/users/_search", { host: second, token: pat, body: {} });
    expect(users.status, JSON.stringify(users.body)).toBe(200);
    expect(users.body.result.map((u: { username: string }) => u.username)).toEqual(["ops"]);
    expect((await api("POST", "/users/_search", { token: pat, body: {} })).status).toBe(401);

    // Its own signing keys.
    const jwks = async (host?: string) => (await rest(t.url, "GET", "/oauth/v2/keys", host ? { host } : {})).body.keys.map((k: { kid: string }) => k.kid);
    const ops = users.body.result[0].details.id as string;
    const secret = (await api("POST", `/users/${ops}/_generate_secret`, { host: second, token: pat, body: {} })).body.clientSecret as string;
    const [rsId, rsSecret, rsProject] = await introspector(second, pat);
    const issued = await form(second, "/oauth/v2/token", { grant_type: "client_credentials", scope: `openid urn:svc:iam:org:project:id:${rsProject}:aud` }, [
      "ops",
      secret,
    ]);
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    const [mine, theirs] = [await jwks(second), await jwks()];
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.filter((k: string) => theirs.includes(k))).toEqual([]);

    // Its token is active at its introspection, inactive at the first instance's.
    const accessToken = issued.body.access_token as string;
    expect((await form(second, "/oauth/v2/introspect", { token: accessToken }, [rsId, rsSecret])).body.active).toBe(true);
    const [firstId, firstSecret] = await introspector(hostOf("127.0.0.1"), t.adminPat);
    expect((await form(hostOf("127.0.0.1"), "/oauth/v2/introspect", { token: accessToken }, [firstId, firstSecret])).body.active).toBe(false);

    const got = await api("GET", `/instances/${id}`);
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(got.body.instance).toMatchObject({ name: "Second", domains: ["second.test"], primaryDomain: "second.test", blocked: false });
    expect(
      (await api("POST", "/instances/_search", { body: { filters: [{ domain: "second.test" }] } })).body.result.map(
        (i: { details: { id: string } }) => i.details.id,
      ),
    ).toEqual([id]);
    expect((await api("PATCH", `/instances/${id}`, { body: { name: "Second, renamed" } })).status).toBe(200);

    // Domains: another one serves it too; the last one cannot go.
    expect((await api("POST", `/instances/${id}/domains`, { body: { domain: "second-alias.test" } })).status).toBe(201);
    expect((await api("POST", "/users/_search", { host: hostOf("second-alias.test"), token: pat, body: {} })).status).toBe(200);
    expect((await api("DELETE", `/instances/${id}/domains/second-alias.test`)).status).toBe(200);
    expect((await rest(t.url, "GET", "/.well-known/openid-configuration", { host: hostOf("second-alias.test") })).status).toBe(404);
    expect((await api("DELETE", `/instances/${id}/domains/second.test`)).status).toBe(400);

    // The primary domain: it cannot go; another one can become primary, and new organisations' domains follow it.
    expect((await api("POST", `/instances/${id}/domains`, { body: { domain: "second-main.test" } })).status).toBe(201);
    const primaryGone = await api("DELETE", `/instances/${id}/domains/second.test`);
    expect(primaryGone.status).toBe(400);
    expect(primaryGone.body.message).toContain("primary domain");
    expect((await api("POST", `/instances/${id}/domains/nowhere.test/_set_as_primary`)).status).toBe(404);
    expect((await api("POST", `/instances/${id}/domains/second-main.test/_set_as_primary`)).status).toBe(200);
    expect((await api("GET", `/instances/${id}`)).body.instance.primaryDomain).toBe("second-main.test");
    const org = await api("POST", "/organizations", { host: second, token: pat, body: { name: "Branch" } });
    expect(org.status, JSON.stringify(org.body)).toBe(201);
    const branch = await api("GET", `/organizations/${org.body.details.id}`, { host: second, token: pat });
    expect(branch.body.organization.primaryDomain).toBe("branch.second-main.test");
    expect((await api("DELETE", `/instances/${id}/domains/second.test`)).status).toBe(200);

    // Deleted: its Host is no longer served, its rows are gone, its events stay.
    expect((await api("DELETE", `/instances/${id}`)).status).toBe(200);
    expect((await rest(t.url, "GET", "/.well-known/openid-configuration", { host: second })).status).toBe(404);
    expect(await t.server.db.prisma.user.count({ where: { instanceId: id } })).toBe(0);
    expect(await t.server.db.prisma.instanceDomain.count({ where: { instanceId: id } })).toBe(0);
    expect(await t.server.db.prisma.event.count({ where: { instanceId: id } })).toBeGreaterThan(0);
    expect((await api("GET", `/instances/${id}`)).status).toBe(404);
  });

  it("with a human administrator whose password follows the rules; domains are checked and unique", async () => {
    const weak = await api("POST", "/instances", {
      body: { name: "Third", domains: ["third.test"], firstOrgName: "Org", human: { username: "boss", password: "short" } },
    });
    expect(weak.status).toBe(400);
    expect(weak.body.message).toContain("human.password");
    const made = await api("POST", "/instances", {
      body: { name: "Third", domains: ["third.test"], firstOrgName: "Org", human: { username: "boss", password: "Str0ng!password", email: "boss@third.test" } },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.pat).toBe("");
    // The system owner reaches it through its Host.
    const users = await api("POST", "/users/_search", { host: hostOf("third.test"), body: {} });
    expect(users.body.result.map((u: { username: string }) => u.username)).toEqual(["boss"]);

    const taken = await api("POST", "/instances", {
      body: { name: "Dup", domains: ["fourth.test", "third.test"], firstOrgName: "Org", machine: { username: "x", name: "x" } },
    });
    expect(taken.status).toBe(409);
    expect(taken.body.message).toContain("domains[1]");
    const bad = await api("POST", "/instances", { body: { name: "Bad", domains: ["Bad_Host"], firstOrgName: "Org", machine: { username: "x", name: "x" } } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain("domains[0]");
    // The instance a call comes through cannot delete itself.
    expect((await api("DELETE", `/instances/${t.instanceId}`)).status).toBe(400);
  });

  it("need a system permission: an instance owner may not create or delete instances", async () => {
    const owner = await t.serviceUser("instances-iam-owner", [{ type: "instance", id: t.instanceId, roles: ["IAM_OWNER"] }]);
    expect(
      (
        await api("POST", "/instances", {
          token: owner.token,
          body: { name: "No", domains: ["no.test"], firstOrgName: "Org", machine: { username: "x", name: "x" } },
        })
      ).status,
    ).toBe(403);
    expect((await api("POST", "/instances/_search", { token: owner.token, body: {} })).status).toBe(403);
  });

  it("a deleted first instance is not made again, and its external domain does not go to another instance", async () => {
    const s = await startTestServer();
    let restarted: TestServer | undefined;
    try {
      const other = await rest(s.url, "POST", "/resources/v3alpha/instances", {
        token: s.adminPat,
        body: { name: "Tenant", domains: ["tenant.test"], firstOrgName: "Tenant Org", machine: { username: "ops", name: "Ops" } },
      });
      expect(other.status, JSON.stringify(other.body)).toBe(201);
      // Through the other instance's Host: an instance cannot delete itself through its own.
      const deleted = await rest(s.url, "DELETE", `/resources/v3alpha/instances/${s.instanceId}`, { token: s.adminPat, host: `tenant.test:${s.port}` });
      expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
      await s.stop();
      // The next start sees that its first instance was deleted: the tenant's instance stays as it was.
      restarted = await s.restart();
      const instances = await restarted.server.db.prisma.instance.findMany();
      expect(instances.map((i) => i.id)).toEqual([other.body.details.id]);
      expect((await restarted.server.db.prisma.instanceDomain.findMany()).map((d) => d.domain)).toEqual(["tenant.test"]);
      expect(instances[0]!.primaryDomain).toBe("tenant.test");
    } finally {
      await (restarted ?? s).close();
    }
  });
});
