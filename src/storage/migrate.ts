import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type pg from "pg";
import { StartupError } from "../config/startup-error.js";
import type { Database } from "./database.js";
import { migrationsDir } from "./paths.js";
import { newClient } from "./primary-client.js";

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

// Arbitrary but fixed: every server process that starts at once waits for the one that sets up.
const SETUP_LOCK = 7_311_001;

/**
 * Runs `fn` while holding the set-up lock on a session of its own, so that several processes starting at
 * the same moment on one database migrate and create the first instance exactly once, one after the other.
 * The lock is session-level and the session is dedicated: a pool could unlock on another connection.
 */
export async function withSetupLock<T>(db: Database, fn: (session: pg.Client) => Promise<T>): Promise<T> {
  const session = newClient(db.sessions);
  session.on("error", () => {});
  await session.connect();
  try {
    await session.query("SELECT pg_advisory_lock($1)", [SETUP_LOCK]);
    return await fn(session);
  } finally {
    // Ending the session releases the lock, also when fn failed half-way.
    await session.end().catch(() => {});
  }
}

/** Applies the pending migrations under the set-up lock (`npm run migrate`, tests). */
export async function migrate(db: Database, migrations: Migration[] = readMigrations()): Promise<string[]> {
  return withSetupLock(db, (session) => applyMigrations(session, migrations));
}

/**
 * Applies every migration not yet applied, each in its own transaction; call it under the set-up lock. A
 * migration whose file changed after it was applied stops the start: history is never rewritten silently.
 */
export async function applyMigrations(session: pg.Client, migrations: Migration[] = readMigrations()): Promise<string[]> {
  await session.query(`CREATE TABLE IF NOT EXISTS "_svc_migrations" (
    name text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
  const { rows } = await session.query<{ name: string; checksum: string }>(`SELECT name, checksum FROM "_svc_migrations"`);
  const applied = new Map(rows.map((r) => [r.name, r.checksum]));
  const done: string[] = [];
  for (const m of migrations) {
    const sum = applied.get(m.name);
    if (sum !== undefined) {
      if (sum !== m.checksum) throw new StartupError(`migration ${m.name} was changed after it was applied`);
      continue;
    }
    const escapedName = m.name.replace(/'/g, "''");
    await session.query(`BEGIN;\n${m.sql}\n;INSERT INTO "_svc_migrations"(name, checksum) VALUES ('${escapedName}', '${m.checksum}');\nCOMMIT;`);
    done.push(m.name);
  }
  return done;
}
