import { randomBytes } from "node:crypto";
import pg from "pg";
import { openDatabase } from "../../src/storage/database.js";
import { migrate } from "../../src/storage/migrate.js";

/**
 * Once per run, with TEST_DATABASE_URL: a database with every migration applied, which the test servers'
 * databases are copied from (CREATE DATABASE ... TEMPLATE) instead of each applying the 40-odd migrations
 * again. The servers still run their set-up on it (nothing left to apply, the first instance made); the
 * tests of the migrations themselves take empty databases (freshPostgresDatabase()).
 */
export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) return undefined;
  const name = `svc_test_template_${randomBytes(6).toString("hex")}`;
  await admin(base, `CREATE DATABASE ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  const db = await openDatabase({ databaseUrl: url.toString(), dataDir: "" });
  try {
    await migrate(db);
  } finally {
    await db.close();
  }
  // the vitest workers are started after this and inherit it (test/support/database.ts reads it)
  process.env.SVC_TEST_PG_TEMPLATE = name;
  return () => admin(base, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

async function admin(base: string, sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: base });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}
