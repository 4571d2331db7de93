import { Secret, TOTP } from "otpauth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIdp } from "../../src/command/idps.js";
import { codeMatches } from "../../src/command/totp.js";
import { codeOverHttp, startRedirectCatcher, webApp } from "../oidc/rp.js";
import { MailServer } from "../support/smtp.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { orgOwner, pbkdf2Hash, post } from "./helpers.js";

const PATH = "/management/v1/users/human/_import";
let t: TestServer;
let mail: MailServer;
let orgId: string;
let owner: string;
let rp: Awaited<ReturnType<typeof startRedirectCatcher>>;
let web: Awaited<ReturnType<typeof webApp>>;

beforeAll(async () => {
  mail = await new MailServer().start();
  t = await startTestServer({ SVC_SMTP_URL: `smtp://127.0.0.1:${mail.port}`, SVC_SMTP_FROM: "iam@example.com" });
  orgId = await t.org("Imports");
  owner = await orgOwner(t, orgId, "import-owner");
  rp = await startRedirectCatcher();
  web = await webApp(t, rp);
});
afterAll(async () => {
  await rp?.close();
  await t?.close();
  await mail?.stop();
});

const body = (userName: string, extra: Record<string, unknown> = {}) => ({
  userName,
  profile: { firstName: "Ada", lastName: "Lovelace" },
  email: { email: `${userName}@example.com`, isEmailVerified: true },
  ...extra,
});
const authorize = {
  response_type: "code",
  scope: "openid",
  redirect_uri: "",
  state: "s",
  code_challenge: "E9Melhoa2OwvFrEMTJguCpdX2r9lKQBnI1m8sPl8sAQ",
  code_challenge_method: "S256",
};

describe("POST /management/v1/users/human/_import", () => {
  it("imports a user with a pbkdf2 hash who then signs in with the old password through the login UI", async () => {
    for (const digest of ["sha1", "sha256", "sha512"] as const) {
      const name = `ada-${digest}`;
      const r = await post(t, PATH, body(name, { hashedPassword: { value: pbkdf2Hash("Old-passw0rd!", digest) } }), owner, { "x-svc-orgid": orgId });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.userId).toMatch(/^\d+$/);
      expect(r.body.details.resourceOwner).toBe(orgId);
      const user = await t.server.db.prisma.user.findUniqueOrThrow({ where: { id: r.body.userId } });
      expect(user).toMatchObject({ orgId, username: name, givenName: "Ada", familyName: "Lovelace", emailVerified: true, state: "active" });
      // Marked as imported: the events' creator.
      const events = await t.server.db.prisma.event.findMany({ where: { aggregateId: r.body.userId } });
      expect(events.map((e) => e.creator)).toEqual(events.map(() => expect.stringMatching(/^import:\d+$/)));
      const { code } = await codeOverHttp(t, { ...authorize, client_id: web.clientId, redirect_uri: `${rp.origin}/cb` }, name, "Old-passw0rd!");
      expect(code).not.toBe("");
    }
  });

  it("accepts snake_case names, imports a TOTP secret verified and the password-change flag", async () => {
    const secret = new Secret({ size: 20 }).base32;
    const r = await post(
      t,
      PATH,
      {
        user_name: "grace",
        profile: { first_name: "Grace", last_name: "Hopper" },
        email: { email: "grace@example.com", is_email_verified: true },
        password: "Plain-passw0rd!",
        password_change_required: true,
        otp_code: secret,
      },
      owner,
      { "x-svc-orgid": orgId },
    );
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const user = await t.server.db.prisma.user.findUniqueOrThrow({ where: { id: r.body.userId } });
    expect(user.passwordChangeRequired).toBe(true);
    expect(user.passwordHash).toMatch(/^\$scrypt\$/);
    const code = new TOTP({ secret: Secret.fromBase32(secret) }).generate();
    const stored = await t.server.db.prisma.userTotp.findUniqueOrThrow({ where: { userId: r.body.userId } });
    expect(stored.verified && codeMatches(t.server.box.open(stored.secret), code)).toBe(true);
    // The secret is sealed at rest, not stored as given.
    const row = await t.server.db.prisma.userTotp.findUniqueOrThrow({ where: { userId: r.body.userId } });
    expect(row.verified).toBe(true);
    expect(row.secret).not.toContain(secret);
  });

  it("refuses a hash form the server cannot verify, naming hashed_password.value, and creates no user", async () => {
    const r = await post(t, PATH, body("md5-user", { hashedPassword: { value: "$md5$abc$def" } }), owner, { "x-svc-orgid": orgId });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe(3);
    expect(r.body.message).toContain("hashed_password.value");
    expect(await t.server.db.prisma.user.findFirst({ where: { username: "md5-user" } })).toBeNull();
  });

  it("answers bad input with INVALID_ARGUMENT naming the field", async () => {
    const cases: [unknown, string][] = [
      [{ profile: {}, email: { email: "x@example.com" } }, "user_name"],
      [body("no-mail", { email: { email: "nope" } }), "email.email"],
      [body("bad-otp", { otpCode: "not base32!" }), "otp_code"],
      [body("weak", { password: "short" }), "password"],
      [body("both", { password: "Plain-passw0rd!", hashedPassword: { value: pbkdf2Hash("x") } }), "password"],
    ];
    for (const [b, field] of cases) {
      const r = await post(t, PATH, b, owner, { "x-svc-orgid": orgId });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.message).toContain(field);
    }
    const notJson = await post(t, PATH, "{not json", owner, { "x-svc-orgid": orgId });
    expect(notJson.status).toBe(400);
  });

  it("needs the organisation owner's permission in the organisation of x-svc-orgid", async () => {
    const other = await t.org("Elsewhere");
    const denied = await post(t, PATH, body("intruder"), owner, { "x-svc-orgid": other });
    expect(denied.status).toBe(403);
    const anonymous = await post(t, PATH, body("anon"), "", {});
    expect(anonymous.status).toBe(401);
    const unknown = await post(t, PATH, body("lost"), owner, { "x-svc-orgid": "123" });
    expect(unknown.status).toBe(404);
    // Without the header: the caller's own organisation.
    const own = await post(t, PATH, body("at-home", { hashedPassword: { value: pbkdf2Hash("Old-passw0rd!") } }), owner);
    expect(own.status).toBe(200);
    expect(own.body.details.resourceOwner).toBe(orgId);
    const taken = await post(t, PATH, body("at-home"), owner);
    expect(taken.status).toBe(409);
  });

  it("mails the initialisation mail only to users with an unverified e-mail or no password", async () => {
    const before = mail.received.length;
    const hash = pbkdf2Hash("Old-passw0rd!");
    await post(
      t,
      PATH,
      body("mail-unverified", { email: { email: "mail-unverified@example.com", isEmailVerified: false }, hashedPassword: { value: hash } }),
      owner,
    );
    await post(t, PATH, body("mail-nopassword"), owner);
    await post(t, PATH, body("mail-none", { hashedPassword: { value: hash } }), owner);
    const got = await mail.waitFor(before + 2);
    // every message the imports' events asked for is handled: a third mail would be here by now
    await t.server.notifications.idle();
    const recipients = got.slice(before).flatMap((m) => m.to);
    expect(recipients.sort()).toEqual(["mail-nopassword@example.com", "mail-unverified@example.com"]);
  });

  it("links the user to accounts at identity providers (idps); the export carries them as userLinks", async () => {
    const idp = await createIdp(t.server.es, t.server.box, {
      kind: "gitlab",
      owner: { type: "instance", id: t.instanceId, instanceId: t.instanceId },
      creator: "test",
      config: { name: "GitLab", options: {}, config: { clientId: "gl-client", scopes: ["openid"] } },
      ownerPolicy: "activate",
    });
    const idps = [{ configId: idp.id, externalUserId: "gl-4711", displayName: "ada@gitlab" }];
    const r = await post(t, PATH, body("linked", { idps }), owner, { "x-svc-orgid": orgId });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(await t.server.db.prisma.userIdpLink.findMany({ where: { userId: r.body.userId } })).toMatchObject([
      { idpId: idp.id, externalUserId: "gl-4711", displayName: "ada@gitlab", orgId },
    ]);
    const twice = await post(t, PATH, body("linked-again", { idps }), owner, { "x-svc-orgid": orgId });
    expect(twice.status).toBe(409);
    expect(twice.body.message).toContain("idps[0].external_user_id");
    const unknown = await post(t, PATH, body("linked-nowhere", { idps: [{ configId: "404", externalUserId: "x" }] }), owner, { "x-svc-orgid": orgId });
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toContain("idps[0].config_id");
    const missing = await post(t, PATH, body("linked-badly", { idps: [{ configId: idp.id }] }), owner, { "x-svc-orgid": orgId });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toContain("idps[0].external_user_id");
    expect(await t.server.db.prisma.user.count({ where: { username: { startsWith: "linked-" } } })).toBe(0);

    const exported = await post(t, "/admin/v1/export", { org_ids: [orgId], response_output: true });
    expect(exported.body.orgs[0].userLinks).toEqual([{ userId: r.body.userId, idpId: idp.id, providedUserId: "gl-4711", providedUserName: "ada@gitlab" }]);
    // Imported again into the same instance: the link is there, nothing is added.
    const again = await post(t, "/admin/v1/import", { data_orgs: exported.body });
    expect(again.body.errors).toEqual([]);
    expect(again.body.success.orgs[0].userLinks).toEqual([{ userId: r.body.userId, idpId: idp.id, externalUserId: "gl-4711" }]);
    expect(await t.server.db.prisma.userIdpLink.count()).toBe(1);
  });
});
