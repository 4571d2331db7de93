import { mkdtempSync, mkdirSync, writeFileSync, cpSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { diffDatabaseToSchema, toolDatabase } from "../../scripts/schema-engine.js";
import { openDatabase } from "../../src/storage/database.js";
import { migrate, readMigrations } from "../../src/storage/migrate.js";
import { migrationsDir } from "../../src/storage/paths.js";
import { freshPostgresDatabase, testDb } from "../support/database.js";

describe("storage", () => {
  it("migrations produce exactly what schema.prisma describes", async () => {
    // The schema tooling's own in-memory database (see scripts/schema-engine.ts for why it is PGlite).
    const db = await toolDatabase();
    try {
      for (const m of readMigrations()) await db.exec(m.sql);
      // the wasm schema engine compares the migrated database with the schema: no statement is missing
      expect(await diffDatabaseToSchema(db)).toBe("");
      // and the comparison is real: a drifted database is caught
      await db.exec(`ALTER TABLE "events" ADD COLUMN "drift" int`);
      expect(await diffDatabaseToSchema(db)).toContain("drift");
    } finally {
      await db.close();
    }
  });

  it("applies each migration once and refuses a migration edited after it was applied", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-migrations-"));
    cpSync(migrationsDir, dir, { recursive: true });
    const pgdb = testDb === "postgres" ? await freshPostgresDatabase() : undefined;
    const dataDir = mkdtempSync(join(tmpdir(), "svc-storage-"));
    const db = await openDatabase({ databaseUrl: pgdb?.url, dataDir });
    try {
      expect((await migrate(db, readMigrations(dir))).length).toBeGreaterThan(0);
      expect(await migrate(db, readMigrations(dir))).toEqual([]);
      const first = readMigrations(dir)[0]!;
      writeFileSync(join(dir, first.name, "migration.sql"), `${first.sql}\n-- edited\n`);
      await expect(migrate(db, readMigrations(dir))).rejects.toThrow(/changed after it was applied/);
      mkdirSync(join(dir, "99999999999999_later"));
      writeFileSync(join(dir, "99999999999999_later", "migration.sql"), 'CREATE TABLE "later" (id int);');
      writeFileSync(join(dir, first.name, "migration.sql"), first.sql);
      expect(await migrate(db, readMigrations(dir))).toEqual(["99999999999999_later"]);
    } finally {
      await db.close();
      await pgdb?.drop();
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
