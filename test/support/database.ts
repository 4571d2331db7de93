import { randomBytes } from "node:crypto";
import pg from "pg";

/** Which database the suite runs on: the embedded PostgreSQL always; PostgreSQL too when TEST_DATABASE_URL is set. */
export const testDb = process.env.SVC_TEST_DB === "postgres" ? "postgres" : "embedded";

/** The master key tests use with DATABASE_URL, where SVC_MASTERKEY is required. */
export const TEST_MASTERKEY = "test-master-key-of-32-bytes-long";

/**
 * A fresh PostgreSQL database for one test server, dropped by the returned function: empty, or `migrated`, a
 * copy of the run's database with the migrations applied (test/support/postgres-template.ts), when there is one.
 * `url` goes through the run's pooler when there is one (test/support/pooler.ts), `directUrl` to the server itself.
 */
export async function freshPostgresDatabase(opts: { migrated?: boolean } = {}): Promise<{ url: string; directUrl: string; drop: () => Promise<void> }> {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) throw new Error("SVC_TEST_DB=postgres needs TEST_DATABASE_URL");
  const name = `svc_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  const template = opts.migrated ? process.env.SVC_TEST_PG_TEMPLATE : undefined;
  await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ""}`);
  await admin.end();
  const of = (server: string) => {
    const url = new URL(server);
    url.pathname = `/${name}`;
    return url.toString();
  };
  return {
    url: of(process.env.TEST_DATABASE_POOLER_URL ?? base),
    directUrl: of(base),
    drop: async () => {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/**
 * A process's environment for a database of `freshPostgresDatabase`: DATABASE_URL, and SVC_DATABASE_DIRECT_URL when
 * that goes through the run's pooler (the LISTEN connection and the set-up lock need the server itself).
 */
export function databaseEnv(db: { url: string; directUrl: string }): Record<string, string> {
  return { DATABASE_URL: db.url, SVC_MASTERKEY: TEST_MASTERKEY, ...(db.directUrl !== db.url ? { SVC_DATABASE_DIRECT_URL: db.directUrl } : {}) };
}
