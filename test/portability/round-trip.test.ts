import { Secret, TOTP } from "otpauth";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApplication, type OidcConfig } from "../../src/command/applications.js";
import { idpLinkEvents } from "../../src/command/idp-links.js";
import { createIdp } from "../../src/command/idps.js";
import { addMembership } from "../../src/command/memberships.js";
import { addRole, createProject } from "../../src/command/projects.js";
import { changeSettings } from "../../src/command/settings.js";
import { addTotp, verifyTotp } from "../../src/command/totp.js";
import { createUserGrant } from "../../src/command/user-grants.js";
import { addMachineKey, addPersonalAccessToken, createHuman, createMachine, generateClientSecret } from "../../src/command/users.js";
import { hashPassword } from "../../src/crypto/password.js";
import { launchChromium } from "../support/browser.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { codeOverHttp, newPage, signInOnPage, startRedirectCatcher } from "../oidc/rp.js";
import { post } from "./helpers.js";

/**
 * The round trip of the proof: an organisation with every kind of object on server A, exported with
 * passwords and OTP, imported into server B; on B the same IDs and fields, a password sign-in through the
 * login UI with an imported application, a TOTP sign-in with the exported secret, and nothing secret left A.
 */
let a: TestServer;
let b: TestServer;
let browser: Browser;
let rp: Awaited<ReturnType<typeof startRedirectCatcher>>;
const PASSWORD = "Round-trip-passw0rd!";
const ids = { idp: "", org: "", alice: "", bob: "", bobTotp: "", machine: "", project: "", spa: "", spaClient: "", web: "", api: "", grant: "" };
const secrets: string[] = [];

beforeAll(async () => {
  [a, b] = await Promise.all([startTestServer(), startTestServer()]);
  browser = await launchChromium();
  rp = await startRedirectCatcher();
  const es = a.server.es;
  const base = { instanceId: a.instanceId, creator: "test" };
  const orgId = await a.org("Travellers");
  ids.org = orgId;
  const human = (username: string, extra = {}) => ({
    username,
    givenName: username,
    familyName: "Traveller",
    email: `${username}@example.com`,
    emailVerified: true,
    phone: "+41 79 000 00 00",
    phoneVerified: true,
    ...extra,
  });
  ids.alice = (
    await createHuman(es, { ...base, orgId, human: human("alice", { nickName: "Al", preferredLanguage: "de" }), passwordHash: await hashPassword(PASSWORD) })
  ).id;
  ids.bob = (await createHuman(es, { ...base, orgId, human: human("bob"), passwordHash: await hashPassword(PASSWORD) })).id;
  // Enrolled as in the login UI: the secret the enrolment shows, confirmed with a code.
  const enrol = await addTotp(es, a.server.box, { ...base, userId: ids.bob, issuer: "test" });
  await verifyTotp(es, a.server.box, { ...base, userId: ids.bob, code: new TOTP({ secret: Secret.fromBase32(enrol.secret) }).generate() });
  ids.bobTotp = enrol.secret;
  ids.machine = (await createMachine(es, { ...base, orgId, machine: { username: "robot", name: "Robot", description: "builds", accessTokenType: "jwt" } })).id;
  secrets.push((await generateClientSecret(es, { ...base, id: ids.machine })).secret);
  secrets.push((await addPersonalAccessToken(es, { ...base, id: ids.machine, expiresAt: null })).token);
  secrets.push(JSON.parse((await addMachineKey(es, { ...base, id: ids.machine, expiresAt: null })).keyContent).key);
  ids.project = (await createProject(es, { ...base, orgId, config: { name: "Shop", projectRoleAssertion: true, projectRoleCheck: false } })).id;
  await addRole(es, { ...base, id: ids.project, role: { key: "buyer", displayName: "Buyer", group: "shop" } });
  await addRole(es, { ...base, id: ids.project, role: { key: "seller", displayName: "Seller", group: "shop" } });
  const spa: OidcConfig = {
    redirectUris: [`${rp.origin}/cb`],
    responseTypes: ["code"],
    grantTypes: ["authorization_code", "refresh_token"],
    appType: "user_agent",
    authMethod: "none",
    postLogoutRedirectUris: [],
    accessTokenType: "jwt",
    idTokenUserinfoAssertion: true,
    accessTokenRoleAssertion: true,
    idTokenRoleAssertion: false,
    devMode: false,
    clockSkewMs: 1000,
  };
  const spaApp = await createApplication(es, { ...base, projectId: ids.project, name: "spa", config: { kind: "oidc", oidc: spa } });
  ids.spa = spaApp.details.id;
  ids.spaClient = spaApp.clientId;
  const webApp = await createApplication(es, {
    ...base,
    projectId: ids.project,
    name: "web",
    config: { kind: "oidc", oidc: { ...spa, appType: "web", authMethod: "client_secret_basic", redirectUris: ["https://web.example.com/cb"] } },
  });
  ids.web = webApp.details.id;
  secrets.push(webApp.clientSecret!);
  const api = await createApplication(es, {
    ...base,
    projectId: ids.project,
    name: "api",
    config: { kind: "api", api: { authMethod: "client_secret_basic" } },
  });
  ids.api = api.details.id;
  secrets.push(api.clientSecret!);
  ids.grant = (await createUserGrant(es, { ...base, userId: ids.alice, projectId: ids.project, roleKeys: ["buyer", "seller"] })).id;
  await addMembership(es, { ...base, type: "org", contextId: orgId, userId: ids.alice }, ["ORG_OWNER"]);
  await addMembership(es, { ...base, type: "project", contextId: ids.project, userId: ids.bob }, ["PROJECT_OWNER"]);
  await changeSettings(es, { kind: "lockout", ...base, owner: { type: "org", id: orgId }, change: { set: { max_password_attempts: 7 }, reset: [] } });
  await changeSettings(es, { kind: "password_complexity", ...base, owner: { type: "org", id: orgId }, change: { set: { min_length: 12 }, reset: [] } });
  const idp = await createIdp(es, a.server.box, {
    kind: "gitlab",
    owner: { type: "org", id: orgId, instanceId: a.instanceId },
    creator: "test",
    config: { name: "Company GitLab", config: { clientId: "gl-client", scopes: ["openid", "read_user"] }, options: { isLinkingAllowed: true } },
    ownerPolicy: "activate",
    secret: "gl-client-secret-value",
  });
  ids.idp = idp.id;
  secrets.push("gl-client-secret-value", (await a.server.db.prisma.idp.findUniqueOrThrow({ where: { id: idp.id } })).secret!);
  await es.execute(async (w) =>
    w.push(
      a.instanceId,
      "test",
      await idpLinkEvents(w.tx, {
        instanceId: a.instanceId,
        userId: ids.alice,
        orgId,
        links: [{ idpId: idp.id, externalUserId: "gl-42", displayName: "alice@gitlab" }],
        fieldOf: () => "link",
      }),
    ),
  );
  // The keys the servers sign tokens with must not travel either.
  const keys = await a.server.db.prisma.signingKey.findMany();
  secrets.push(...keys.map((k) => k.privateKey));
});
afterAll(async () => {
  await browser?.close();
  await rp?.close();
  await a?.close();
  await b?.close();
});

describe("export from A, import into B", () => {
  let exported: { orgs: Record<string, any>[] };
  let text: string;

  it("exports the organisation with passwords and OTP, and nothing secret", async () => {
    const r = await post(a, "/admin/v1/export", { org_ids: [ids.org], with_passwords: true, with_otp: true, response_output: true, timeout: "1m" });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    exported = r.body;
    text = JSON.stringify(r.body);
    expect(exported.orgs).toHaveLength(1);
    const org = exported.orgs[0]!;
    expect(org.orgId).toBe(ids.org);
    expect(org.org).toEqual({ name: "Travellers" });
    const alice = org.humanUsers.find((u: any) => u.userId === ids.alice).user;
    expect(alice).toMatchObject({
      userName: "alice",
      profile: { firstName: "alice", lastName: "Traveller", nickName: "Al", preferredLanguage: "de" },
      email: { email: "alice@example.com", isEmailVerified: true },
      phone: { phone: "+41 79 000 00 00", isPhoneVerified: true },
      hashedPassword: { value: expect.stringMatching(/^\$scrypt\$/) },
    });
    expect(org.humanUsers.find((u: any) => u.userId === ids.bob).user.otpCode).toBe(ids.bobTotp);
    expect(org.machineUsers).toEqual([
      { userId: ids.machine, user: { userName: "robot", name: "Robot", description: "builds", accessTokenType: "ACCESS_TOKEN_TYPE_JWT" } },
    ]);
    expect(org.projectRoles.map((r: any) => r.roleKey).sort()).toEqual(["buyer", "seller"]);
    expect(org.userGrants).toEqual([{ userGrantId: ids.grant, userId: ids.alice, projectId: ids.project, roleKeys: ["buyer", "seller"] }]);
    expect(org.lockoutPolicy).toEqual({ maxPasswordAttempts: 7 });
    expect(org.gitlabIdps).toEqual([
      {
        idpId: ids.idp,
        idp: { name: "Company GitLab", clientId: "gl-client", scopes: ["openid", "read_user"], options: { isLinkingAllowed: true }, ownerPolicy: "activate" },
      },
    ]);
    expect(org.userLinks).toEqual([{ userId: ids.alice, idpId: ids.idp, providedUserId: "gl-42", providedUserName: "alice@gitlab" }]);
    expect(org.passwordComplexityPolicy).toEqual({ minLength: 12 });
    for (const s of secrets) expect(text).not.toContain(s);
    expect(text).not.toMatch(/secretHash|privateKey|tokenHash|publicKey/);
    // Without the flags: no hashes, no TOTP secrets.
    const plain = await post(a, "/admin/v1/export", { orgIds: [ids.org], responseOutput: true });
    expect(JSON.stringify(plain.body)).not.toMatch(/hashedPassword|otpCode/);
  });

  it("imports into B with the same IDs and fields; twice creates nothing twice", async () => {
    const r = await post(b, "/admin/v1/import", { data_orgs: exported, timeout: "5m" });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.errors).toEqual([]);
    const ok = r.body.success.orgs[0];
    expect(ok.orgId).toBe(ids.org);
    expect(ok.humanUserIds.sort()).toEqual([ids.alice, ids.bob].sort());
    expect(ok.machineUserIds).toEqual([ids.machine]);
    expect(ok.projectIds).toEqual([ids.project]);
    expect(ok.oidcAppIds.sort()).toEqual([ids.spa, ids.web].sort());
    expect(ok.apiAppIds).toEqual([ids.api]);

    const db = b.server.db.prisma;
    expect(await db.org.findUniqueOrThrow({ where: { id: ids.org } })).toMatchObject({ instanceId: b.instanceId, name: "Travellers" });
    const aliceA = await a.server.db.prisma.user.findUniqueOrThrow({ where: { id: ids.alice } });
    const aliceB = await db.user.findUniqueOrThrow({ where: { id: ids.alice } });
    for (const f of [
      "orgId",
      "username",
      "givenName",
      "familyName",
      "nickName",
      "displayName",
      "preferredLanguage",
      "email",
      "emailVerified",
      "phone",
      "phoneVerified",
      "passwordHash",
      "state",
    ] as const) {
      expect(aliceB[f], f).toEqual(aliceA[f]);
    }
    expect(await db.user.findUniqueOrThrow({ where: { id: ids.machine } })).toMatchObject({
      username: "robot",
      displayName: "Robot",
      accessTokenType: "jwt",
      secretHash: null,
    });
    expect(await db.personalAccessToken.count({ where: { userId: ids.machine } })).toBe(0);
    expect(await db.machineKey.count({ where: { userId: ids.machine } })).toBe(0);
    expect(await db.project.findUniqueOrThrow({ where: { id: ids.project } })).toMatchObject({ name: "Shop", projectRoleAssertion: true, orgId: ids.org });
    expect((await db.projectRole.findMany({ where: { projectId: ids.project } })).map((r) => [r.key, r.displayName, r.group]).sort()).toEqual([
      ["buyer", "Buyer", "shop"],
      ["seller", "Seller", "shop"],
    ]);
    for (const id of [ids.spa, ids.web, ids.api]) {
      const appA = await a.server.db.prisma.application.findUniqueOrThrow({ where: { id } });
      const appB = await db.application.findUniqueOrThrow({ where: { id } });
      expect({ ...appB, secretHash: null, instanceId: "", sequence: 0, createdAt: 0, changeDate: 0 }).toEqual({
        ...appA,
        secretHash: null,
        instanceId: "",
        sequence: 0,
        createdAt: 0,
        changeDate: 0,
      });
    }
    expect(await db.userGrant.findUniqueOrThrow({ where: { id: ids.grant } })).toMatchObject({
      userId: ids.alice,
      projectId: ids.project,
      roleKeys: ["buyer", "seller"],
    });
    expect(
      (await db.membership.findMany({ where: { userId: { in: [ids.alice, ids.bob] } } })).map((m) => [m.contextType, m.contextId, m.userId, m.roles]).sort(),
    ).toEqual(
      [
        ["org", ids.org, ids.alice, ["ORG_OWNER"]],
        ["project", ids.project, ids.bob, ["PROJECT_OWNER"]],
      ].sort(),
    );
    expect(await db.idp.findUniqueOrThrow({ where: { id: ids.idp } })).toMatchObject({
      ownerType: "org",
      ownerId: ids.org,
      name: "Company GitLab",
      secret: null,
    });
    expect(await db.userIdpLink.findMany({ where: { userId: ids.alice } })).toMatchObject([
      { idpId: ids.idp, externalUserId: "gl-42", displayName: "alice@gitlab" },
    ]);
    const lockout = await db.setting.findUniqueOrThrow({ where: { kind_ownerType_ownerId: { kind: "lockout", ownerType: "org", ownerId: ids.org } } });
    expect(lockout.values).toEqual({ max_password_attempts: 7 });
    // Marked as imported: every event of the organisation's objects has an import creator.
    const creators = await db.event.findMany({
      where: { aggregateId: { in: [ids.org, ids.alice, ids.project, ids.spa, ids.grant] } },
      select: { creator: true },
    });
    expect(new Set(creators.map((c) => c.creator.replace(/\d+$/, "")))).toEqual(new Set(["import:"]));

    const eventsBefore = await db.event.count();
    const again = await post(b, "/admin/v1/import", { dataOrgs: exported, timeout: "5m" });
    expect(again.status).toBe(200);
    expect(again.body.errors).toEqual([]);
    expect(again.body.success.orgs[0].humanUserIds.sort()).toEqual([ids.alice, ids.bob].sort());
    expect(await db.event.count()).toBe(eventsBefore);
  });

  it("on B, alice signs in with her old password through the login UI with the imported application", async () => {
    const verifier = "a".repeat(43);
    const { createHash } = await import("node:crypto");
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    const { code } = await codeOverHttp(
      b,
      {
        client_id: ids.spaClient,
        response_type: "code",
        scope: "openid",
        redirect_uri: `${rp.origin}/cb`,
        state: "s",
        code_challenge: challenge,
        code_challenge_method: "S256",
      },
      "alice",
      PASSWORD,
    );
    const token = await fetch(`${b.url}/oauth/v2/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: `${rp.origin}/cb`, client_id: ids.spaClient, code_verifier: verifier }),
    });
    expect(token.status).toBe(200);
    const { id_token } = (await token.json()) as { id_token: string };
    expect(JSON.parse(Buffer.from(id_token.split(".")[1]!, "base64url").toString()).sub).toBe(ids.alice);
  });

  it("on B, bob signs in with his password and a code of the exported TOTP secret", async () => {
    const { page, ctx } = await newPage(browser);
    await page.goto(`${b.url}/ui/login`);
    await signInOnPage(page, "bob", PASSWORD);
    expect(await page.textContent("h1")).toBe("Authenticator code");
    await page.fill("#code", new TOTP({ secret: Secret.fromBase32(ids.bobTotp) }).generate());
    await page.click("button[type=submit]");
    expect(await page.locator("#loginName").count()).toBe(0);
    expect(await page.textContent("main")).toContain("bob");
    await ctx.close();
  });
});
