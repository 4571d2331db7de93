import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Database } from "./database.js";
import { migrationsDir } from "./paths.js";

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

/** The migrations in prisma/migrations, in the order their folder names sort (timestamp prefixes). */
export function readMigrations(dir: string = migrationsDir): Migration[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, "migration.sql")))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

// Arbitrary but fixed: every server process that starts at once waits for the one that migrates.
const MIGRATION_LOCK = 7_311_001;

/**
 * Applies every migration not yet applied, each in its own transaction, under an advisory lock so that
 * several processes starting together migrate once. A migration whose file changed after it was applied
 * stops the start: history is never rewritten silently.
 */
export async function migrate(db: Database, migrations: Migration[] = readMigrations()): Promise<string[]> {
  const p = db.prisma;
  await db.execScript(`CREATE TABLE IF NOT EXISTS "_svc_migrations" (
    name text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
  await p.$executeRawUnsafe(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
  try {
    const rows = await p.$queryRawUnsafe<{ name: string; checksum: string }[]>(`SELECT name, checksum FROM "_svc_migrations"`);
    const applied = new Map(rows.map((r) => [r.name, r.checksum]));
    const done: string[] = [];
    for (const m of migrations) {
      const sum = applied.get(m.name);
      if (sum !== undefined) {
        if (sum !== m.checksum) throw new Error(`migration ${m.name} was changed after it was applied`);
        continue;
      }
      const escapedName = m.name.replace(/'/g, "''");
      await db.execScript(`BEGIN;\n${m.sql}\n;INSERT INTO "_svc_migrations"(name, checksum) VALUES ('${escapedName}', '${m.checksum}');\nCOMMIT;`);
      done.push(m.name);
    }
    return done;
  } finally {
    await p.$executeRawUnsafe(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`);
  }
}
