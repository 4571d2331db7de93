import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApplication, type OidcConfig } from "../../src/command/applications.js";
import { addAuthRequest } from "../../src/command/auth-requests.js";
import { codesForHuman } from "../../src/command/user-codes.js";
import { addMembership } from "../../src/command/memberships.js";
import { addOrgDomain } from "../../src/command/org-domains.js";
import { changeOrg } from "../../src/command/orgs.js";
import { createProjectGrant, removeProjectGrant } from "../../src/command/project-grants.js";
import { addRole, createProject, removeProject } from "../../src/command/projects.js";
import { createUserGrant } from "../../src/command/user-grants.js";
import { setUserMetadata } from "../../src/command/user-metadata.js";
import { addMachineKey, addPersonalAccessToken, createHuman, createMachine, deleteUser } from "../../src/command/users.js";
import { hashPassword } from "../../src/crypto/password.js";
import { humanAdded } from "../../src/events/index.js";
import { newId } from "../../src/ids.js";
import { allProjections, type ProjectionTable } from "../../src/projections/index.js";
import { outdatedProjections, rebuildProjections, sqlTables } from "../../src/projections/rebuild.js";
import { runCli, spawnMain } from "../support/cli.js";
import { TEST_MASTERKEY } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { FormClient } from "../security/browser-form.js";

/**
 * `svc projections rebuild`: every projection rebuilt from the event log gives back its table row for row
 * (removals that cascade across tables included), on a running server that keeps taking writes meanwhile.
 */
let t: TestServer;
const PASSWORD = "Rebuild-passw0rd!";

/** Every row of the table, in a stable order, as JSON. */
async function rowsOf(table: ProjectionTable): Promise<string[]> {
  const { rows } = await t.server.db.pool.query(`SELECT * FROM "${sqlTables[table]}"`);
  return rows.map((r) => JSON.stringify(r, (_k, v) => (typeof v === "bigint" ? v.toString() : v))).sort();
}

async function snapshot(): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const p of allProjections) out[p.table] = await rowsOf(p.table);
  return out;
}

beforeAll(async () => {
  t = await startTestServer();
  const es = t.server.es;
  const base = { instanceId: t.instanceId, creator: "test" };
  const seed = async (orgName: string) => {
    const orgId = await t.org(orgName);
    await addOrgDomain(es, { ...base, orgId, domain: `${orgName.toLowerCase()}.example`, verified: true });
    const human = (
      await createHuman(es, {
        ...base,
        orgId,
        human: { username: `ann-${orgName}`, givenName: "Ann", familyName: orgName, email: `ann@${orgName}.example`, emailVerified: true },
        passwordHash: await hashPassword(PASSWORD),
      })
    ).id;
    await setUserMetadata(es, { ...base, userId: human, entries: [{ key: "team", value: Buffer.from("blue") }] });
    const machine = (
      await createMachine(es, { ...base, orgId, machine: { username: `bot-${orgName}`, name: "Bot", description: "", accessTokenType: "opaque" } })
    ).id;
    await addPersonalAccessToken(es, { ...base, id: machine, expiresAt: null });
    await addMachineKey(es, { ...base, id: machine, expiresAt: null });
    const project = (await createProject(es, { ...base, orgId, config: { name: `shop-${orgName}`, projectRoleAssertion: true, projectRoleCheck: false } })).id;
    await addRole(es, { ...base, id: project, role: { key: "buyer", displayName: "Buyer", group: "" } });
    const oidc: OidcConfig = {
      redirectUris: ["https://rp.example/cb"],
      responseTypes: ["code"],
      grantTypes: ["authorization_code"],
      appType: "web",
      authMethod: "client_secret_basic",
      postLogoutRedirectUris: [],
      accessTokenType: "jwt",
      idTokenUserinfoAssertion: false,
      accessTokenRoleAssertion: false,
      idTokenRoleAssertion: false,
      devMode: false,
      clockSkewMs: 0,
    };
    await createApplication(es, { ...base, projectId: project, name: "web", config: { kind: "oidc", oidc } });
    await createUserGrant(es, { ...base, userId: human, projectId: project, roleKeys: ["buyer"] });
    await addMembership(es, { ...base, userId: human, type: "project", contextId: project }, ["PROJECT_OWNER"]);
    return { orgId, human, machine, project };
  };
  const a = await seed("Alpha");
  const b = await seed("Beta");
  const c = await seed("Gamma");
  // a grant of Alpha's project to Beta, with a user grant and a membership of Beta's user on it
  const grantId = "grant-alpha-beta";
  await createProjectGrant(es, { ...base, projectId: a.project, grantedOrgId: b.orgId, roleKeys: ["buyer"], id: grantId });
  await createUserGrant(es, { ...base, userId: b.human, projectId: a.project, roleKeys: ["buyer"] });
  await addMembership(es, { ...base, userId: b.human, type: "project_grant", contextId: grantId }, ["PROJECT_GRANT_OWNER"]);
  // a browser session (login_sessions), then removals whose handlers read other tables' rows
  expect(await new FormClient(t.url).signIn("ann-Alpha", PASSWORD)).toBe(200);
  await removeProjectGrant(es, { ...base, projectId: a.project, grantId });
  await deleteUser(es, { ...base, id: a.machine });
  await removeProject(es, { ...base, id: c.project });
  await changeOrg(es, { ...base, id: b.orgId, action: "remove" });
}, 120_000);
afterAll(() => t?.close());

describe("projections rebuilt from the event log", () => {
  it("give back every table row for row, each on its own and all together", async () => {
    const before = await snapshot();
    // the seed reached the tables whose handlers read others, and the removals emptied some of their rows
    expect(before.userGrant!.length).toBeGreaterThan(0);
    expect(before.membership!.length).toBeGreaterThan(0);
    expect(before.loginSession!.length).toBeGreaterThan(0);
    for (const p of allProjections) {
      await rebuildProjections(t.server.db, [p.table]);
      expect(await snapshot(), `after rebuilding ${p.table}`).toEqual(before);
    }
    const all = await rebuildProjections(t.server.db);
    expect(all.tables.map((r) => r.table).sort()).toEqual(allProjections.map((p) => p.table).sort());
    expect(await snapshot()).toEqual(before);
    expect(await outdatedProjections(t.server.db)).toEqual([]);
  }, 120_000);

  it("a rebuild loses none of the writes that arrive while it runs", async () => {
    const es = t.server.es;
    const base = { instanceId: t.instanceId, creator: "test" };
    const orgId = t.defaultOrgId;
    const writes = Array.from({ length: 20 }, (_, i) =>
      createHuman(es, {
        ...base,
        orgId,
        human: { username: `during-${i}`, givenName: "D", familyName: String(i), email: `d${i}@example.com`, emailVerified: false },
      }),
    );
    const [rebuilt, ...created] = await Promise.all([rebuildProjections(t.server.db, ["user"]), ...writes]);
    expect(rebuilt.tables.map((r) => r.table)).toEqual(["user"]);
    const users = await t.server.db.prisma.user.findMany({ where: { id: { in: created.map((c) => c.id) } } });
    expect(users).toHaveLength(20);
    // and the table is what the log says: a second rebuild changes nothing
    const now = await rowsOf("user");
    await rebuildProjections(t.server.db, ["user"]);
    expect(await rowsOf("user")).toEqual(now);
  }, 60_000);

  it("`svc projections rebuild` runs beside the running server, which serves the rebuilt rows", async () => {
    const url = (t.server.db.connection as { connectionString?: string }).connectionString;
    const env = { SVC_DATA_DIR: dirname(t.server.firstInstance.passwordFile!), ...(url ? { DATABASE_URL: url, SVC_MASTERKEY: TEST_MASTERKEY } : {}) };
    const before = await rowsOf("membership");
    const r = await runCli(["projections", "rebuild", "membership"], env, 60_000);
    expect(r.code, r.stderr).toBe(0);
    // the memberships, and the tables their handlers read
    expect(r.stdout).toMatch(/^rebuilt membership \(version 1\): \d+ rows$/m);
    expect(r.stdout).toMatch(/^rebuilt user \(version \d+\): \d+ rows$/m);
    expect(r.stdout).toMatch(/^replayed \d+ events in \d+ ms$/m);
    expect(await rowsOf("membership")).toEqual(before);
    // the server goes on: a sign-in reads the rebuilt users
    expect(await new FormClient(t.url).signIn("ann-Alpha", PASSWORD)).toBe(200);

    const unknown = await runCli(["projections", "rebuild", "nonsense"], env, 60_000);
    expect(unknown.code).toBe(1);
    expect(unknown.errorLines.join("\n")).toMatch(/no projection "nonsense"; the projections are: .*membership/);
  }, 120_000);

  it("keeps what no event gives back: pending authorization requests, a session's last use", async () => {
    const es = t.server.es;
    const pending = await addAuthRequest(es, {
      instanceId: t.instanceId,
      clientId: "c",
      request: { scopes: ["openid"] },
      expiresAt: new Date(Date.now() + 60_000),
    });
    expect(await new FormClient(t.url).signIn("ann-Gamma", PASSWORD)).toBe(200);
    const session = await t.server.db.prisma.loginSession.findFirstOrThrow({ where: { userId: { not: "" } }, orderBy: { createdAt: "desc" } });
    const usedAt = new Date(Date.now() - 5_000);
    // what a use of the session writes (command/sessions.ts), without an event
    await es.execute((w) => w.tx.loginSession.updateMany({ where: { id: session.id }, data: { usedAt } }));
    await rebuildProjections(t.server.db);
    expect(await t.server.db.prisma.authRequest.findUnique({ where: { id: pending } })).toMatchObject({ state: "pending", clientId: "c" });
    expect((await t.server.db.prisma.loginSession.findUniqueOrThrow({ where: { id: session.id } })).usedAt).toEqual(usedAt);
  });

  it("gives way to a command holding one of its tables and tries again (no deadlock error)", async () => {
    const es = t.server.es;
    const userId = newId();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let wroteUser!: () => void;
    const userWritten = new Promise<void>((r) => (wroteUser = r));
    let attempts = 0;
    // users first, then user_codes, in one transaction, as createHuman with codes writes them: the rebuild of
    // user codes (with the users it reads) takes user_codes first, then waits for users
    const writer = es.execute(async (w) => {
      attempts++;
      await w.push(t.instanceId, "test", [
        humanAdded.event({ aggregateId: userId, resourceOwner: t.defaultOrgId }, {
          username: `lock-${userId}`,
          givenName: "L",
          familyName: "K",
          displayName: "L K",
          email: "lock@example.com",
          emailVerified: false,
        } as never),
      ]);
      wroteUser();
      if (attempts === 1) await gate;
      const codes = codesForHuman(t.server.box, w.clock.now(), { email: "lock@example.com", emailVerified: false, needsPassword: true });
      await w.push(t.instanceId, "test", codes.map((c) => ({ ...c, aggregateId: userId, resourceOwner: t.defaultOrgId })) as never);
    });
    await userWritten;
    const rebuild = rebuildProjections(t.server.db, ["userCode"]);
    await new Promise((r) => setTimeout(r, 300));
    release();
    await Promise.all([writer, rebuild]);
    expect(await t.server.db.prisma.userCode.count({ where: { userId } })).toBeGreaterThan(0);
    expect(await t.server.db.prisma.user.count({ where: { id: userId } })).toBe(1);
  }, 60_000);

  it("at start, a projection without a record (added since) or with an older version is outdated; a new database is not", async () => {
    expect(await outdatedProjections(t.server.db)).toEqual([]);
    await t.server.db.pool.query("DELETE FROM projection_states WHERE name = 'userMetadata'");
    await t.server.db.pool.query("UPDATE projection_states SET version = 0 WHERE name = 'target'");
    expect((await outdatedProjections(t.server.db)).sort()).toEqual(["target", "userMetadata"]);
    await rebuildProjections(t.server.db, ["target", "userMetadata"]);
    expect(await outdatedProjections(t.server.db)).toEqual([]);
  });

  it("a rebuild killed with kill -9 before its commit changes nothing", async () => {
    const url = (t.server.db.connection as { connectionString?: string }).connectionString;
    const env = { SVC_DATA_DIR: dirname(t.server.firstInstance.passwordFile!), ...(url ? { DATABASE_URL: url, SVC_MASTERKEY: TEST_MASTERKEY } : {}) };
    const pool = t.server.db.pool;
    // a row no event carries: a rebuild that commits removes it, one that does not leaves it
    await pool.query(
      "INSERT INTO org_domains (org_id, instance_id, domain, verified, is_primary, generated, validation_type, validation_token, sequence, created_at, change_date) SELECT org_id, instance_id, 'planted.example', false, false, false, '', '', 0, now(), now() FROM org_domains LIMIT 1",
    );
    // hold the rebuild at its last write (its record), after it emptied and refilled the table
    const holder = await pool.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT 1 FROM projection_states WHERE name = 'orgDomain' FOR UPDATE");
      const rebuild = spawnMain(["projections", "rebuild", "orgDomain"], env);
      const exited = new Promise<NodeJS.Signals | null>((r) => rebuild.on("exit", (_code, signal) => r(signal)));
      let waiting: number | undefined;
      for (let i = 0; i < 200 && waiting === undefined; i++) {
        const { rows } = await pool.query<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO projection_states%'",
        );
        waiting = rows[0]?.pid;
        if (waiting === undefined) await new Promise((r) => setTimeout(r, 100));
      }
      expect(waiting, "the rebuild reached its last write").toBeDefined();
      rebuild.kill("SIGKILL");
      expect(await exited).toBe("SIGKILL");
      await holder.query("ROLLBACK");
      for (let i = 0; i < 100; i++) {
        const { rows } = await pool.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [waiting]);
        if (!rows.length) break;
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      holder.release();
    }
    expect((await pool.query("SELECT count(*)::int AS n FROM org_domains WHERE domain = 'planted.example'")).rows).toEqual([{ n: 1 }]);
    await rebuildProjections(t.server.db, ["orgDomain"]);
    expect((await pool.query("SELECT count(*)::int AS n FROM org_domains WHERE domain = 'planted.example'")).rows).toEqual([{ n: 0 }]);
  }, 90_000);

  it("a server starting on a table that an older version wrote rebuilds it before it serves", async () => {
    await t.server.db.pool.query("UPDATE projection_states SET version = 0, rebuilt_at = now() - interval '1 day' WHERE name = 'orgDomain'");
    const before = await rowsOf("orgDomain");
    await t.stop();
    t = await t.restart();
    const { rows } = await t.server.db.pool.query(
      "SELECT version, rebuilt_at > now() - interval '1 minute' AS fresh FROM projection_states WHERE name = 'orgDomain'",
    );
    expect(rows).toEqual([{ version: 1, fresh: true }]);
    expect(await rowsOf("orgDomain")).toEqual(before);
    expect(await new FormClient(t.url).signIn("ann-Alpha", PASSWORD)).toBe(200);
  }, 60_000);

  it("names its SQL tables as schema.prisma maps them", () => {
    const schema = readFileSync(new URL("../../prisma/schema.prisma", import.meta.url), "utf8");
    for (const [, model, body] of schema.matchAll(/^model (\w+) \{([\s\S]*?)^\}/gm)) {
      const table = (model![0]!.toLowerCase() + model!.slice(1)) as ProjectionTable;
      if (table in sqlTables) expect(sqlTables[table], model).toBe(/@@map\("(\w+)"\)/.exec(body!)![1]);
    }
  });
});
