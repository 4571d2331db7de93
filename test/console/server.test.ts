import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONSOLE_CSP } from "../../src/server/console.js";
import { rest } from "../support/clients.js";
import { consoleBuild } from "../support/console.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { addHuman, codeOverHttp } from "../oidc/rp.js";

/**
 * The admin console as the server provides it (docs/contract.md "Admin console"): its OAuth client in every instance,
 * the redirect URI on the issuer the browser came through, what the console asks about its user, and its files.
 * The console itself, in Chromium: console.test.ts.
 */
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({}, { consoleDir: await consoleBuild() });
});
afterAll(() => t?.close());

const environment = (host?: string) => rest(t.url, "GET", "/ui/console/environment.json", host ? { host } : {});
const challenge = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");

describe("the console's OAuth client", () => {
  it("is the public application console of the project IAM in the first instance's default organisation", async () => {
    const env = await environment();
    expect(env.status).toBe(200);
    expect(env.body.issuer).toBe(t.url);
    const app = await t.server.db.prisma.application.findFirstOrThrow({ where: { instanceId: t.instanceId, clientId: env.body.clientId } });
    expect(app.name).toBe("console");
    const project = await t.server.db.prisma.project.findUniqueOrThrow({ where: { id: app.projectId } });
    expect({ name: project.name, orgId: project.orgId }).toEqual({ name: "IAM", orgId: t.defaultOrgId });
    expect(app.secretHash).toBeNull();
    expect(app.config).toMatchObject({
      authMethod: "none",
      appType: "user_agent",
      redirectUris: ["/ui/console/auth/callback"],
      postLogoutRedirectUris: ["/ui/console/"],
    });
  });

  it("is made with every instance the system API creates, and answers for the instance of the Host", async () => {
    const made = await rest(t.url, "POST", "/resources/v3alpha/instances", {
      token: t.adminPat,
      body: { name: "Tenant", domains: ["tenant.console.test"], firstOrgName: "Tenant org", machine: { username: "tenant-admin", name: "Tenant admin" } },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const env = await environment("tenant.console.test");
    expect(env.body.issuer).toBe("http://tenant.console.test");
    expect(env.body.clientId).toMatch(/@console$/);
    expect(env.body.clientId).not.toBe((await environment()).body.clientId);
    expect((await environment("nobody.console.test")).status).toBe(404);
  });

  it("accepts exactly <issuer>/ui/console/auth/callback as its redirect URI, and nothing else", async () => {
    const { clientId } = (await environment()).body;
    const authorize = (redirectUri: string) =>
      rest(
        t.url,
        "GET",
        `/oauth/v2/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, response_type: "code", scope: "openid", code_challenge: challenge("v".repeat(43)), code_challenge_method: "S256" })}`,
      );
    expect((await authorize(`${t.url}/ui/console/auth/callback`)).status).toBe(303);
    const port = new URL(t.url).port;
    for (const wrong of [
      "/ui/console/auth/callback",
      `http://localhost:${port}/ui/console/auth/callback`,
      `https://127.0.0.1:${port}/ui/console/auth/callback`,
      `${t.url}/ui/console/auth/callback/`,
      `${t.url}/ui/console/auth/callback?x=1`,
      `http://evil.example/ui/console/auth/callback`,
    ]) {
      const r = await authorize(wrong);
      expect(r.status, wrong).toBe(400);
      expect(String(r.body)).toContain("redirect_uri is not registered");
    }
  });

  it("signs a user in with PKCE and no secret; a user without roles has no memberships", async () => {
    const { clientId } = (await environment()).body;
    await addHuman(t, "consolereader", "Corr3ct!horse");
    const verifier = "c".repeat(50);
    const redirectUri = `${t.url}/ui/console/auth/callback`;
    const scope = "openid profile offline_access urn:svc:iam:org:project:id:svc:aud";
    const { code, location } = await codeOverHttp(
      t,
      {
        client_id: clientId,
        redirect_uri: redirectUri,
        response_type: "code",
        scope,
        code_challenge: challenge(verifier),
        code_challenge_method: "S256",
        state: "s1",
      },
      "consolereader",
      "Corr3ct!horse",
    );
    expect(location.startsWith(`${redirectUri}?`)).toBe(true);
    const token = await rest(t.url, "POST", "/oauth/v2/token", {
      body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: redirectUri, client_id: clientId, code_verifier: verifier }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(token.status, JSON.stringify(token.body)).toBe(200);
    expect(token.body.refresh_token).toBeTruthy();
    const mine = await rest(t.url, "GET", "/resources/v3alpha/memberships/_mine", { token: token.body.access_token });
    expect(mine.status).toBe(200);
    expect(mine.body.result ?? []).toEqual([]);
  });
});

describe("ListMyMemberships", () => {
  it("lists the caller's own memberships with the permissions their roles give", async () => {
    const admin = await rest(t.url, "GET", "/resources/v3alpha/memberships/_mine", { token: t.adminPat });
    expect(admin.status).toBe(200);
    const [system, instance] = admin.body.result;
    expect(system).toMatchObject({ system: true, roles: ["SYSTEM_OWNER"] });
    expect(instance).toMatchObject({ instance: true, roles: ["IAM_OWNER"] });
    expect(instance.permissions).toContain("org.read");
    expect(instance.permissions).toEqual([...instance.permissions].sort());

    const orgId = await t.org("Console owners");
    const owner = await t.serviceUser("console-owner", [{ type: "org", id: orgId, roles: ["ORG_OWNER"] }], orgId);
    const mine = await rest(t.url, "GET", "/resources/v3alpha/memberships/_mine", { token: owner.token });
    expect(mine.body.result).toHaveLength(1);
    expect(mine.body.result[0]).toMatchObject({ organizationId: orgId, roles: ["ORG_OWNER"] });
    expect(mine.body.result[0].permissions).toContain("user.write");
    expect(mine.body.result[0].permissions).not.toContain("iam.policy.write");
  });

  it("needs a signed-in caller", async () => {
    expect((await rest(t.url, "GET", "/resources/v3alpha/memberships/_mine")).status).toBe(401);
  });
});

describe("redirect URIs given as paths on the issuer", () => {
  const newApp = async (redirectUris: string[]) => {
    const project = await rest(t.url, "POST", "/resources/v3alpha/projects", { token: t.adminPat, body: { name: `paths ${Math.random()}` } });
    return rest(t.url, "POST", `/resources/v3alpha/projects/${project.body.details.id}/applications`, {
      token: t.adminPat,
      body: { name: "paths", oidc: { redirectUris, appType: "OIDC_APP_TYPE_USER_AGENT", authMethodType: "OIDC_AUTH_METHOD_TYPE_NONE" } },
    });
  };

  it("are accepted as one path on this server", async () => {
    expect((await newApp(["/app/callback"])).status).toBe(201);
  });

  it("are refused when they would lead to another host, naming the field", async () => {
    for (const uri of ["//evil.example/cb", "/\\evil.example/cb", "app/callback", "/with space"]) {
      const r = await newApp(["https://ok.example/cb", uri]);
      expect(r.status, uri).toBe(400);
      expect(r.body.message, uri).toContain("invalid application.oidc.redirect_uris[1]");
    }
  });
});

describe("the console's files", () => {
  it("GET / and /ui/console lead to /ui/console/", async () => {
    for (const path of ["/", "/ui/console"]) {
      const r = await rest(t.url, "GET", path);
      expect(r.status, path).toBe(302);
      expect(r.headers.location).toBe("/ui/console/");
    }
  });

  it("serves its page at every path under it, never cached, with a CSP without inline scripts or styles", async () => {
    for (const path of ["/ui/console/", "/ui/console/users/123", "/ui/console/auth/callback?code=x&state=y"]) {
      const r = await rest(t.url, "GET", path);
      expect(r.status, path).toBe(200);
      expect(r.headers["content-type"]).toContain("text/html");
      expect(r.headers["cache-control"]).toBe("no-cache");
      expect(r.headers["content-security-policy"]).toBe(CONSOLE_CSP);
      expect(r.headers["x-frame-options"]).toBe("DENY");
      expect(String(r.body)).toContain('<div id="root">');
    }
    expect(CONSOLE_CSP).toContain("script-src 'self';");
    expect(CONSOLE_CSP).toContain("style-src 'self';");
    expect(CONSOLE_CSP).not.toContain("unsafe");
  });

  it("has no inline script or style in its page; its hashed files are cached for a year and sent compressed", async () => {
    const page = String((await rest(t.url, "GET", "/ui/console/")).body);
    expect(page).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(page).not.toMatch(/<style|style="/);
    const files = [...page.matchAll(/(?:src|href)="(\/ui\/console\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(files.length).toBeGreaterThanOrEqual(2);
    for (const file of files) {
      const r = await rest(t.url, "GET", file, { headers: { "accept-encoding": "gzip" } });
      expect(r.status, file).toBe(200);
      expect(r.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
      expect(r.headers["content-encoding"]).toBe("gzip");
      expect(file).toMatch(/-[\w-]{8}\.(js|css)$/);
    }
    const plain = await fetch(`${t.url}${files.find((f) => f.endsWith(".js"))}`);
    expect(plain.headers.get("content-type")).toContain("text/javascript");
    expect((await plain.text()).length).toBeGreaterThan(1000);
  });

  it("answers 404 for a file that is not there (a stale chunk fails as itself, not as the page)", async () => {
    const r = await rest(t.url, "GET", "/ui/console/assets/index-00000000.js");
    expect(r.status).toBe(404);
    expect(String(r.body)).not.toContain("<div");
  });
});

describe("an instance made before there was a console", () => {
  it("gets the console's project and application at the next start, once", async () => {
    const s = await startTestServer({}, { consoleDir: await consoleBuild() });
    try {
      // what a database of an older version holds: no console events, no console rows
      const db = s.server.db.prisma;
      await db.$executeRawUnsafe(`DELETE FROM events WHERE instance_id = $1 AND aggregate_type IN ('project', 'application')`, s.instanceId);
      await db.application.deleteMany({ where: { instanceId: s.instanceId } });
      await db.project.deleteMany({ where: { instanceId: s.instanceId } });
      await s.stop();
      const again = await s.restart();
      const env = await rest(again.url, "GET", "/ui/console/environment.json");
      expect(env.body.clientId).toMatch(/@console$/);
      await again.stop();
      const third = await again.restart();
      expect(await third.server.db.prisma.application.count({ where: { instanceId: third.instanceId, name: "console" } })).toBe(1);
      await third.close();
    } catch (err) {
      await s.close().catch(() => {});
      throw err;
    }
  });
});
