import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changeUserState } from "../../src/command/users.js";
import { runCli } from "../support/cli.js";
import { rest } from "../support/clients.js";
import { TEST_MASTERKEY } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";

/** Signs in on the login form; 200 with the change-password page when the password was right (it must be changed), 401 when not. */
async function signIn(t: TestServer, loginName: string, password: string): Promise<{ status: number; body: string }> {
  const page = await rest(t.url, "GET", "/ui/login");
  const cookie = String(page.headers["set-cookie"]).split(";")[0]!;
  const csrf = (page.body as string).match(/name="csrf" value="([^"]+)"/)![1]!;
  const r = await rest(t.url, "POST", "/ui/login/password", {
    body: new URLSearchParams({ loginName, password, csrf }).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", cookie },
  });
  return { status: r.status, body: String(r.body) };
}

describe("no known default password", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it("generates the first admin's password into a file of mode 0600 beside the PAT, and it signs in", async () => {
    const file = t.server.firstInstance.passwordFile!;
    expect(file).toMatch(/admin\.password$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(existsSync(`${dirname(file)}/admin.pat`)).toBe(true);
    const password = readFileSync(file, "utf8").trim();
    expect(password.length).toBeGreaterThanOrEqual(24);
    expect(password).not.toBe("Password1!");
    const ok = await signIn(t, "admin", password);
    expect(ok.status).toBe(200);
    expect(ok.body).toContain('name="newPassword"');
    expect((await signIn(t, "admin", "Password1!")).status).toBe(401);
  });

  it("writes no file when SVC_FIRSTINSTANCE_ADMIN_PASSWORD is set, and that password signs in", async () => {
    const s = await startTestServer({ SVC_FIRSTINSTANCE_ADMIN_PASSWORD: "Configured-Secret-9" });
    try {
      expect(s.server.firstInstance.passwordFile).toBeUndefined();
      expect((await signIn(s, "admin", "Configured-Secret-9")).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});

describe("operator recovery (recover command, database access, no token)", () => {
  let t: TestServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    t = await startTestServer();
    const url = (t.server.db.connection as { connectionString?: string }).connectionString;
    // the running server's own database: its DATABASE_URL, or (embedded) its data directory, whose
    // PostgreSQL the running server owns; the command connects to it through the socket
    env = { SVC_DATA_DIR: dirname(t.server.firstInstance.passwordFile!), ...(url ? { DATABASE_URL: url, SVC_MASTERKEY: TEST_MASTERKEY } : {}) };
  });
  afterAll(() => t.close());

  const userId = async (username: string) => (await t.server.db.prisma.user.findFirstOrThrow({ where: { instanceId: t.instanceId, loginName: username } })).id;

  it("unlocks a locked service user and issues a new PAT that works at once on the running server", async () => {
    const id = await userId("admin-service");
    await changeUserState(t.server.es, { instanceId: t.instanceId, id, creator: "test", action: "lock" });
    expect((await rest(t.url, "GET", "/settings/v3alpha/languages", { token: t.adminPat })).status).toBe(401);
    const r = await runCli(["recover", "--user", "admin-service"], env, 60_000);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/unlocked/);
    const pat = r.stdout.trim();
    expect(pat).toMatch(/^pat_/);
    expect((await rest(t.url, "GET", "/settings/v3alpha/languages", { token: pat })).status).toBe(200);
    expect((await rest(t.url, "GET", "/settings/v3alpha/languages", { token: t.adminPat })).status).toBe(200);
  });

  it("unlocks a locked human admin and gives it a new password to change at sign-in", async () => {
    const id = await userId("admin");
    await changeUserState(t.server.es, { instanceId: t.instanceId, id, creator: "test", action: "lock" });
    const old = readFileSync(t.server.firstInstance.passwordFile!, "utf8").trim();
    expect((await signIn(t, "admin", old)).status).toBe(401);
    const r = await runCli(["recover", "--user", "admin", "--new-password"], env, 60_000);
    expect(r.code, r.stderr).toBe(0);
    const password = r.stdout.trim();
    const ok = await signIn(t, "admin", password);
    expect(ok.status).toBe(200);
    expect(ok.body).toContain('name="newPassword"');
    expect((await signIn(t, "admin", old)).status).toBe(401);
  });

  it("names an unknown user and needs --user", async () => {
    const r = await runCli(["recover", "--user", "nobody"], env, 60_000);
    expect(r.code).toBe(1);
    expect(r.errorLines).toEqual([expect.stringMatching(/^cannot recover: --user nobody: no such user/)]);
    const n = await runCli(["recover"], env);
    expect(n.code).toBe(1);
    expect(n.stderr).toMatch(/recover needs --user/);
  });
});
