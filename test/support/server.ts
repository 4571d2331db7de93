import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addOrg } from "../../src/command/orgs.js";
import { addServiceUser } from "../../src/command/users.js";
import { loadConfig } from "../../src/config/config.js";
import type { ContextType } from "../../src/events/index.js";
import { startServer, type RunningServer, type StartOptions } from "../../src/server/app.js";
import { freshPostgresDatabase, TEST_MASTERKEY, testDb } from "./database.js";

export interface TestServer {
  server: RunningServer;
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  /** The first instance's IAM_OWNER (and SYSTEM_OWNER) service user's PAT, read from the file first start wrote. */
  adminPat: string;
  instanceId: string;
  defaultOrgId: string;
  /** Stops the server and keeps its database, for a restart. */
  stop(): Promise<void>;
  /** Starts it again on the same database (another port). */
  restart(): Promise<TestServer>;
  /** Stops the server and removes its database. */
  close(): Promise<void>;
  /** A new service user with a PAT and the given memberships. */
  /** A new organisation in the first instance. */
  org(name: string): Promise<string>;
  serviceUser(username: string, memberships?: { type: ContextType; id: string; roles: string[] }[], orgId?: string): Promise<{ userId: string; token: string }>;
}

interface Storage {
  dataDir: string;
  databaseUrl: string | undefined;
  /** The server itself when `databaseUrl` goes through the run's pooler. */
  directUrl?: string | undefined;
  drop(): Promise<void>;
}

async function newStorage(): Promise<Storage> {
  const dataDir = mkdtempSync(join(tmpdir(), "svc-test-"));
  if (testDb === "postgres") {
    const pgdb = await freshPostgresDatabase({ migrated: true });
    return {
      dataDir,
      databaseUrl: pgdb.url,
      directUrl: pgdb.directUrl === pgdb.url ? undefined : pgdb.directUrl,
      drop: async () => {
        await pgdb.drop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  return { dataDir, databaseUrl: undefined, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
}

async function boot(storage: Storage, env: Record<string, string>, opts: StartOptions = {}): Promise<TestServer> {
  const config = loadConfig(
    {
      SVC_PORT: "0",
      SVC_HOST: "127.0.0.1",
      SVC_DATA_DIR: storage.dataDir,
      SVC_LOG_LEVEL: "silent",
      // the suite signs in thousands of times: hashes at 2^10 instead of 2^15 (the hashing tests set their own)
      SVC_PASSWORD_HASH_COST: "10",
      SVC_SHUTDOWN_GRACE_MS: "2000",
      // suites try wrong passwords, secrets, codes and tokens from one address far more often than anyone
      // would (they are on by default); the limits' own tests set these (an empty value is the default)
      SVC_RATE_LIMIT_SIGNIN_FAILURES_ADDRESS: "off",
      SVC_RATE_LIMIT_SIGNIN_FAILURES_ACCOUNT: "off",
      SVC_RATE_LIMIT_TOKEN_FAILURES_ADDRESS: "off",
      // suites run their targets, mail, SMS, S3 and DNS servers on loopback, which the default denies; the
      // address policy's own tests set what they test (an empty value is the default)
      SVC_TARGET_DENY: "none",
      // the external identity providers of the tests (oidc-provider) serve plain http on loopback
      SVC_IDP_INSECURE_HTTP: "on",
      ...(storage.databaseUrl ? { DATABASE_URL: storage.databaseUrl, SVC_MASTERKEY: TEST_MASTERKEY } : {}),
      ...(storage.directUrl ? { SVC_DATABASE_DIRECT_URL: storage.directUrl } : {}),
      ...env,
    },
    [],
  );
  const server = await startServer(config, { logger: false, ...opts });
  const instance = await server.db.prisma.instance.findFirstOrThrow({ orderBy: { createdAt: "asc" } });
  const url = `http://127.0.0.1:${server.port}`;
  const t: TestServer = {
    server,
    url,
    port: server.port,
    adminPat: readFileSync(config.firstInstancePatPath, "utf8").trim(),
    instanceId: instance.id,
    defaultOrgId: instance.defaultOrgId!,
    stop: () => server.close(),
    restart: async () => boot(storage, env, opts),
    close: async () => {
      await server.close();
      await storage.drop();
    },
    org: (name) => addOrg(server.es, { instanceId: instance.id, name, domain: "localhost", creator: "test" }),
    serviceUser: (username, memberships = [], orgId) =>
      addServiceUser(server.es, { instanceId: instance.id, orgId: orgId ?? instance.defaultOrgId!, username, memberships, creator: "test" }),
  };
  return t;
}

/** A real server on a free loopback port with its own fresh database (embedded data directory or PostgreSQL database). */
export async function startTestServer(env: Record<string, string> = {}, opts: StartOptions = {}): Promise<TestServer> {
  const storage = await newStorage();
  try {
    return await boot(storage, env, opts);
  } catch (err) {
    // a start that is refused (the tests of refusals) leaves no directory or database behind
    await storage.drop().catch(() => {});
    throw err;
  }
}
