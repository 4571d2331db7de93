// npm run db:migration -- <name>: writes prisma/migrations/<timestamp>_<name>/migration.sql with the SQL
// that takes a database migrated to the newest migration to what schema.prisma describes.
// npm run db:check: fails when schema.prisma and the migrations disagree (CI runs it).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readMigrations } from "../src/storage/migrate.js";
import { migrationsDir } from "../src/storage/paths.js";
import { diffDatabaseToSchema, toolDatabase } from "./schema-engine.js";

const [mode, name] = process.argv.slice(2);
const db = await toolDatabase();
for (const m of readMigrations()) await db.exec(m.sql);
const sql = await diffDatabaseToSchema(db);
await db.close();

if (mode === "check") {
  if (sql) {
    console.error(`schema.prisma and prisma/migrations disagree; the missing migration would be:\n${sql}`);
    process.exit(1);
  }
  console.log("schema.prisma and prisma/migrations agree");
} else {
  if (!name || !/^[a-z0-9_]+$/.test(name)) {
    console.error("usage: npm run db:migration -- <name in lower_snake_case>");
    process.exit(2);
  }
  if (!sql) {
    console.log("schema.prisma and prisma/migrations already agree: no migration written");
  } else {
    const stamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14);
    const dir = join(migrationsDir, `${stamp}_${name}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "migration.sql"), sql);
    console.log(`wrote ${dir}/migration.sql`);
  }
}
