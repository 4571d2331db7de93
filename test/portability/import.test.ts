import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { MailServer } from "../support/smtp.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { pbkdf2Hash, post } from "./helpers.js";

/** The import's error handling: per-entry reports, clear errors for bad requests, the timeout, mail on import. */
let t: TestServer;
let mail: MailServer;
const hash = pbkdf2Hash("Old-passw0rd!");

beforeAll(async () => {
  mail = await new MailServer().start();
  t = await startTestServer({ SVC_SMTP_URL: `smtp://127.0.0.1:${mail.port}`, SVC_SMTP_FROM: "iam@example.com" });
});
afterAll(async () => {
  await t?.close();
  await mail?.stop();
});

const human = (userId: string, userName: string, extra: Record<string, unknown> = {}) => ({
  userId,
  user: {
    userName,
    profile: { firstName: "F", lastName: "L" },
    email: { email: `${userName}@example.com`, isEmailVerified: true },
    hashedPassword: { value: hash },
    ...extra,
  },
});
const importOrgs = (orgs: unknown[], timeout = "1m") => post(t, "/admin/v1/import", { data_orgs: { orgs }, timeout });

describe("POST /admin/v1/import: bad input", () => {
  it("reports bad entries with type and ID and imports the rest", async () => {
    const r = await importOrgs([
      {
        orgId: "900001",
        org: { name: "Mixed" },
        humanUsers: [
          human("900010", "good"),
          human("900011", "md5", { hashedPassword: { value: "$md5$x$y" } }),
          human("900012", "twin"),
          human("900013", "TWIN"),
        ],
        userLinks: [
          { userId: "404", idpId: "1", providedUserId: "x" },
          { userId: "900010", idpId: "404", providedUserId: "y" },
        ],
        projects: [{ projectId: "900020", project: { name: "P" } }],
        projectRoles: [
          { projectId: "900020", roleKey: "r" },
          { projectId: "404", roleKey: "r" },
        ],
        userGrants: [
          { userId: "900010", projectId: "900020", roleKeys: ["r"] },
          { userId: "404", projectId: "900020", roleKeys: ["r"] },
          { userId: "900012", projectId: "404" },
          { userId: "900012", projectId: "900020", roleKeys: ["missing-role"] },
        ],
        orgMembers: [
          { userId: "404", roles: ["ORG_OWNER"] },
          { userId: "900010", roles: ["NO_SUCH_ROLE"] },
        ],
        oidcApps: [
          { appId: "900030", app: { projectId: "404", name: "lost" } },
          { appId: "900031", app: { projectId: "900020", name: "bad", grantTypes: ["NOPE"] } },
        ],
      },
      { orgId: "", org: { name: "No ID" } },
    ]);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const errs = r.body.errors.map((e: { type: string; id: string }) => `${e.type} ${e.id}`);
    expect(errs).toEqual([
      "human_user 900011",
      "human_user 900013",
      "user_link 1:x",
      "user_link 404:y",
      "project_role 404:r",
      "oidc_app 900030",
      "oidc_app 900031",
      // Links (user grants, members) come once every organisation of the file has its users and projects.
      "org ",
      "user_grant 404:900020",
      "user_grant 900012:404",
      "user_grant 900012:900020",
      "org_member 900001:404",
      "org_member 900001:900010",
    ]);
    const byId = Object.fromEntries(r.body.errors.map((e: { id: string; message: string }) => [e.id, e.message]));
    expect(byId["900011"]).toContain("human_users[1].user.hashed_password.value");
    expect(byId["900013"]).toContain('"TWIN" is taken');
    expect(byId["404:900020"]).toContain('user "404" not found');
    expect(byId["1:x"]).toContain('user "404" not found');
    expect(byId["404:y"]).toContain("user_links[1].config_id");
    expect(byId["900030"]).toContain('project "404" not found');
    expect(byId["900031"]).toContain("grant_types[0]");
    const ok = r.body.success.orgs[0];
    expect(ok.humanUserIds).toEqual(["900010", "900012"]);
    expect(ok.userGrants).toEqual([{ userId: "900010", projectId: "900020" }]);
    expect(await t.server.db.prisma.user.count({ where: { orgId: "900001" } })).toBe(2);
  });

  it("answers a malformed request with INVALID_ARGUMENT naming the field, never a 5xx", async () => {
    const cases: [unknown, string][] = [
      [{ data_orgs: { orgs: [] }, timeout: "soon" }, "timeout"],
      [{ data_orgs: { orgs: [] }, timeout: 30 }, "timeout"],
      [{ data_orgs: { orgs: [] }, timeout: "-1s" }, "timeout"],
      [{ timeout: "1m" }, "data"],
      [{ data_orgs: { orgs: [] }, data_orgsv1: { orgs: [] } }, "data"],
      [{ data_orgs: { orgs: "x" } }, "data_orgs.orgs"],
      [{ data_orgs: { orgs: [{ orgId: "1", humanUsers: "x" }] } }, "data_orgs.orgs[0].humanUsers"],
      [{ data_orgs_s3: { path: "x" } }, "data_orgs_s3.endpoint"],
    ];
    for (const [body, field] of cases) {
      const r = await post(t, "/admin/v1/import", body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe(3);
      expect(r.body.message).toContain(field);
    }
    const exp = await post(t, "/admin/v1/export", { timeout: "1x", response_output: true });
    expect(exp.status).toBe(400);
    expect(exp.body.message).toContain("timeout");
    const ids = await post(t, "/admin/v1/export", { org_ids: "1", response_output: true });
    expect(ids.status).toBe(400);
    expect(ids.body.message).toContain("org_ids");
  });

  it("refuses a 50 MB body with 413 and a clear message, and needs the instance owner", async () => {
    const big = JSON.stringify({ data_orgs: { orgs: [{ orgId: "1", org: { name: "x".repeat(50 * 2 ** 20) } }] } });
    const r = await rest(t.url, "POST", "/admin/v1/import", { token: t.adminPat, body: big });
    expect(r.status).toBe(413);
    expect(r.body.message).toContain("larger than 32 MiB");
    const orgId = await t.org("Owned");
    const owner = (await t.serviceUser("org-owner", [{ type: "org", id: orgId, roles: ["ORG_OWNER"] }], orgId)).token;
    expect((await post(t, "/admin/v1/import", { data_orgs: { orgs: [] } }, owner)).status).toBe(403);
    expect((await post(t, "/admin/v1/export", { response_output: true }, owner)).status).toBe(403);
    expect((await post(t, "/admin/v1/export", { response_output: true }, "")).status).toBe(401);
  });

  it("ends with DEADLINE_EXCEEDED and a report when the timeout runs out; running it again completes the rest", async () => {
    const users = Array.from({ length: 2000 }, (_, i) => human(String(910000 + i), `slow-${i}`));
    const orgs = [{ orgId: "909999", org: { name: "Slow" }, humanUsers: users }];
    const r = await importOrgs(orgs, "100ms");
    expect(r.status).toBe(504);
    expect(r.body.code).toBe(4);
    const report = r.body.details[0];
    const done = report.success.orgs[0]?.humanUserIds ?? [];
    expect(done.length).toBeLessThan(2000);
    // Every user reported done is there, whole; nothing else is.
    expect(await t.server.db.prisma.user.count({ where: { orgId: "909999" } })).toBe(done.length);
    const again = await importOrgs(orgs, "5m");
    expect(again.status).toBe(200);
    expect(again.body.success.orgs[0].humanUserIds).toHaveLength(2000);
    expect(await t.server.db.prisma.user.count({ where: { orgId: "909999" } })).toBe(2000);
  });
});

describe("mail on import", () => {
  it("sends the initialisation mail once, exactly to users with an unverified e-mail or without a password", async () => {
    const before = mail.received.length;
    const orgs = [
      {
        orgId: "920000",
        org: { name: "Mail" },
        humanUsers: [
          human("920001", "verified-with-password"),
          human("920002", "unverified-with-password", { email: { email: "unverified-with-password@example.com", isEmailVerified: false } }),
          human("920003", "verified-no-password", { hashedPassword: undefined }),
          human("920004", "unverified-no-password", { hashedPassword: undefined, email: { email: "unverified-no-password@example.com" } }),
        ],
      },
    ];
    expect((await importOrgs(orgs)).body.errors).toEqual([]);
    // The same import again: nothing new, no second mail.
    expect((await importOrgs(orgs)).body.errors).toEqual([]);
    await mail.waitFor(before + 3);
    // every message the imports' events asked for is handled: a second mail would be here by now
    await t.server.notifications.idle();
    const got = mail.received.slice(before);
    expect(got.flatMap((m) => m.to).sort()).toEqual([
      "unverified-no-password@example.com",
      "unverified-with-password@example.com",
      "verified-no-password@example.com",
    ]);
    // The initialisation mail: a link into the login UI to set the password.
    for (const m of got) expect(m.raw).toMatch(/\/ui\//);
  });
});
