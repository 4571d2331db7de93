import { openDatabase } from "../../src/storage/database.js";
import { migrate } from "../../src/storage/migrate.js";
import { freshPostgresDatabase } from "./database.js";

/**
 * Once per run, with TEST_DATABASE_URL: a database with every migration applied, which the test servers'
 * databases are copied from (CREATE DATABASE ... TEMPLATE) instead of each applying the 40-odd migrations
 * again. The servers still run their set-up on it (nothing left to apply, the first instance made); the
 * tests of the migrations themselves take empty databases (freshPostgresDatabase()).
 */
export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  if (!process.env.TEST_DATABASE_URL) return undefined;
  const template = await freshPostgresDatabase();
  // on the server itself: a pooler would keep sessions on it, and a database in use cannot be copied
  const db = await openDatabase({ databaseUrl: template.directUrl, dataDir: "" });
  try {
    await migrate(db);
  } finally {
    await db.close();
  }
  // the vitest workers are started after this and inherit it (freshPostgresDatabase({ migrated: true }) reads it)
  process.env.SVC_TEST_PG_TEMPLATE = new URL(template.directUrl).pathname.slice(1);
  return template.drop;
}
