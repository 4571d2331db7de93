import { execFile } from "node:child_process";
import { createHash, pbkdf2Sync, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Secret, TOTP } from "otpauth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeMatches } from "../../src/command/totp.js";
import { projectRoot } from "../../src/storage/paths.js";
import { codeOverHttp, createApp, startRedirectCatcher } from "../oidc/rp.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { post } from "./helpers.js";

/**
 * svc-migrate keycloak on a realm export whose credentials are made here from known passwords the way
 * Keycloak stores them. Format source: Keycloak's `Pbkdf2PasswordHashProvider` (server-spi-private,
 * org.keycloak.credential.hash; factories Pbkdf2Sha256PasswordHashProviderFactory: 27500 iterations, 512-bit
 * key; Pbkdf2Sha512...: 210000; Pbkdf2...: HmacSHA1) writes `secretData` {"value": base64(key), "salt":
 * base64(16 random bytes), "additionalParameters": {}} and `credentialData` {"hashIterations", "algorithm",
 * "additionalParameters"}; the OTP credential (`OTPCredentialModel`) keeps the secret as text in
 * `secretData.value`, and authenticator apps get its UTF-8 bytes in base32. The realm export's shape is
 * that of `kc.sh export` (RealmRepresentation: users with credentials, roles.realm, roles.client, groups).
 */
const run = promisify(execFile);
let t: TestServer;
let orgId: string;
let rp: Awaited<ReturnType<typeof startRedirectCatcher>>;
const dir = mkdtempSync(join(tmpdir(), "svc-migrate-"));
const otpText = "kc-otp-secret-123456";

function keycloakPassword(password: string, algorithm: "pbkdf2" | "pbkdf2-sha256" | "pbkdf2-sha512", iterations: number) {
  const digest = { pbkdf2: "sha1", "pbkdf2-sha256": "sha256", "pbkdf2-sha512": "sha512" }[algorithm];
  const salt = randomBytes(16);
  const value = pbkdf2Sync(password, salt, iterations, 64, digest).toString("base64");
  return {
    type: "password",
    createdDate: 1700000000000,
    secretData: JSON.stringify({ value, salt: salt.toString("base64"), additionalParameters: {} }),
    credentialData: JSON.stringify({ hashIterations: iterations, algorithm, additionalParameters: {} }),
  };
}

const user = (id: string, username: string, credentials: object[], extra = {}) => ({
  id,
  createdTimestamp: 1700000000000,
  username,
  enabled: true,
  totp: false,
  emailVerified: true,
  firstName: username,
  lastName: "Keycloak",
  email: `${username}@example.com`,
  credentials,
  disableableCredentialTypes: [],
  requiredActions: [],
  realmRoles: ["default-roles-demo", "admin"],
  clientRoles: { shop: ["buyer"] },
  notBefore: 0,
  groups: ["/staff"],
  ...extra,
});

const realm = {
  id: "demo",
  realm: "demo",
  roles: { realm: [{ name: "default-roles-demo" }, { name: "admin" }], client: { shop: [{ name: "buyer" }, { name: "seller" }] } },
  groups: [{ name: "staff", path: "/staff", subGroups: [{ name: "night", path: "/staff/night", subGroups: [] }] }],
  users: [
    user("8e1f5c3a-0000-4000-8000-000000000001", "kc-alice", [
      keycloakPassword("Alice-kc-passw0rd", "pbkdf2-sha256", 27500),
      {
        type: "otp",
        userLabel: "phone",
        secretData: JSON.stringify({ value: otpText }),
        credentialData: JSON.stringify({ subType: "totp", digits: 6, counter: 0, period: 30, algorithm: "HmacSHA1" }),
      },
    ]),
    user("8e1f5c3a-0000-4000-8000-000000000002", "kc-bob", [keycloakPassword("Bob-kc-passw0rd", "pbkdf2-sha512", 210000)], { emailVerified: false }),
    user("8e1f5c3a-0000-4000-8000-000000000003", "kc-carol", [keycloakPassword("Carol-kc-passw0rd", "pbkdf2", 27500)]),
    user("8e1f5c3a-0000-4000-8000-000000000004", "kc-dave", [
      {
        type: "password",
        secretData: JSON.stringify({ value: "x", salt: "y", additionalParameters: {} }),
        credentialData: JSON.stringify({ hashIterations: 5, algorithm: "argon2", additionalParameters: {} }),
      },
    ]),
  ],
};

const migrate = (...args: string[]) =>
  run(process.execPath, ["--import", "tsx", "scripts/svc-migrate.ts", ...args], { cwd: projectRoot }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );

beforeAll(async () => {
  t = await startTestServer();
  orgId = await t.org("From Keycloak");
  rp = await startRedirectCatcher();
  writeFileSync(join(dir, "realm.json"), JSON.stringify(realm));
});
afterAll(async () => {
  await rp?.close();
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("svc-migrate keycloak", () => {
  it("converts the realm, reports what it did not convert, and the import signs the users in with their Keycloak passwords", async () => {
    const out = join(dir, "importBody.json");
    const r = await migrate("keycloak", "--org", orgId, "--realm", join(dir, "realm.json"), "--output", out, "--timeout", "10m", "--multiline");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('unsupported password algorithm "argon2"');
    const summary = JSON.parse(r.stderr.slice(r.stderr.indexOf("{"), r.stderr.lastIndexOf("}") + 1));
    expect(summary).toMatchObject({ users: 4, passwords: 3, otp: 1, problems: 1 });
    expect(summary.notConverted).toEqual({
      realmRoles: ["default-roles-demo", "admin"],
      clientRoles: ["shop:buyer", "shop:seller"],
      groups: ["/staff", "/staff/night"],
      userRoleAssignments: 12,
      userGroupMemberships: 4,
    });
    const text = readFileSync(out, "utf8");
    expect(text).toContain('\n  "dataOrgs"');
    const body = JSON.parse(text);
    expect(body.timeout).toBe("10m0s");
    const users = body.dataOrgs.orgs[0].humanUsers;
    expect(body.dataOrgs.orgs[0].orgId).toBe(orgId);
    expect(users[0]).toMatchObject({
      userId: "8e1f5c3a-0000-4000-8000-000000000001",
      user: {
        userName: "kc-alice",
        profile: { firstName: "kc-alice", lastName: "Keycloak" },
        email: { email: "kc-alice@example.com", isEmailVerified: true },
        hashedPassword: { value: expect.stringMatching(/^\$pbkdf2-sha256\$27500\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/) },
        otpCode: new Secret({ buffer: new TextEncoder().encode(otpText).buffer as ArrayBuffer }).base32,
      },
    });
    expect(users[1].user.hashedPassword.value).toMatch(/^\$pbkdf2-sha512\$210000\$/);
    expect(users[2].user.hashedPassword.value).toMatch(/^\$pbkdf2\$27500\$/);
    expect(users[3].user.hashedPassword).toBeUndefined();

    // The body as the tool wrote it, unchanged.
    const imported = await post(t, "/admin/v1/import", text);
    expect(imported.status, JSON.stringify(imported.body)).toBe(200);
    expect(imported.body.errors).toEqual([]);
    expect(imported.body.success.orgs[0].humanUserIds).toHaveLength(4);

    // kc-carol (pbkdf2-sha1) and kc-bob (pbkdf2-sha512) sign in through the OIDC code flow with their Keycloak passwords.
    const app = await createApp(t, "kc-web", {
      redirectUris: [`${rp.origin}/cb`],
      grantTypes: ["OIDC_GRANT_TYPE_AUTHORIZATION_CODE"],
      appType: "OIDC_APP_TYPE_WEB",
      authMethodType: "OIDC_AUTH_METHOD_TYPE_BASIC",
    });
    const verifier = "v".repeat(43);
    for (const [username, password, id] of [
      ["kc-carol", "Carol-kc-passw0rd", "8e1f5c3a-0000-4000-8000-000000000003"],
      ["kc-bob", "Bob-kc-passw0rd", "8e1f5c3a-0000-4000-8000-000000000002"],
    ]) {
      const params = {
        client_id: app.clientId,
        response_type: "code",
        scope: "openid",
        redirect_uri: `${rp.origin}/cb`,
        state: "s",
        code_challenge: createHash("sha256").update(verifier).digest("base64url"),
        code_challenge_method: "S256",
      };
      const { code } = await codeOverHttp(t, params, username!, password!);
      const token = await fetch(`${t.url}/oauth/v2/token`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: `Basic ${Buffer.from(`${app.clientId}:${app.clientSecret}`).toString("base64")}`,
        },
        body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: `${rp.origin}/cb`, code_verifier: verifier }),
      });
      expect(token.status).toBe(200);
      const { id_token } = (await token.json()) as { id_token: string };
      expect(JSON.parse(Buffer.from(id_token.split(".")[1]!, "base64url").toString()).sub).toBe(id);
    }
    // kc-alice's authenticator app keeps working: a code of the Keycloak secret checks.
    const code = new TOTP({ secret: Secret.fromUTF8(otpText) }).generate();
    const stored = await t.server.db.prisma.userTotp.findUniqueOrThrow({ where: { userId: "8e1f5c3a-0000-4000-8000-000000000001" } });
    expect(stored.verified && codeMatches(t.server.box.open(stored.secret), code)).toBe(true);
  });

  it("--dry-run prints the counts and writes nothing", async () => {
    const out = join(dir, "dry.json");
    const r = await migrate("keycloak", "--org", orgId, "--realm", join(dir, "realm.json"), "--output", out, "--dry-run");
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('"users": 4');
    expect(existsSync(out)).toBe(false);
  });

  it("fails clearly without --org, with an unreadable or malformed realm", async () => {
    const noOrg = await migrate("keycloak", "--realm", join(dir, "realm.json"));
    expect(noOrg.code).toBe(2);
    expect(noOrg.stderr).toContain("--org is required");
    const missing = await migrate("keycloak", "--org", "1", "--realm", join(dir, "nope.json"));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("cannot read the realm file");
    writeFileSync(join(dir, "bad.json"), "{nope");
    const bad = await migrate("keycloak", "--org", "1", "--realm", join(dir, "bad.json"));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("is not JSON");
    writeFileSync(join(dir, "list.json"), "[]");
    const list = await migrate("keycloak", "--org", "1", "--realm", join(dir, "list.json"));
    expect(list.code).toBe(1);
    expect(list.stderr).toContain("not a Keycloak realm export");
    const wrong = await migrate("okta", "--org", "1");
    expect(wrong.code).toBe(2);
  });
});
