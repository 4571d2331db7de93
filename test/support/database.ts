import { randomBytes } from "node:crypto";
import pg from "pg";

/** Which database the suite runs on: the embedded PostgreSQL always; PostgreSQL too when TEST_DATABASE_URL is set. */
export const testDb = process.env.SVC_TEST_DB === "postgres" ? "postgres" : "embedded";

/** The master key tests use with DATABASE_URL, where SVC_MASTERKEY is required. */
export const TEST_MASTERKEY = "test-master-key-of-32-bytes-long";

/**
 * A fresh PostgreSQL database for one test server, dropped by the returned function: empty, or `migrated`, a
 * copy of the run's database with the migrations applied (test/support/postgres-template.ts), when there is one.
 */
export async function freshPostgresDatabase(opts: { migrated?: boolean } = {}): Promise<{ url: string; drop: () => Promise<void> }> {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) throw new Error("SVC_TEST_DB=postgres needs TEST_DATABASE_URL");
  const name = `svc_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  const template = opts.migrated ? process.env.SVC_TEST_PG_TEMPLATE : undefined;
  await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ""}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}
