import { mkdtempSync, mkdirSync, writeFileSync, cpSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { diffDatabaseToSchema } from "../../scripts/schema-engine.js";
import { openDatabase } from "../../src/storage/database.js";
import { migrate, readMigrations } from "../../src/storage/migrate.js";
import { migrationsDir } from "../../src/storage/paths.js";
import { freshPostgresDatabase, testDb } from "../support/database.js";

describe("storage", () => {
  it("migrations produce exactly what schema.prisma describes", async () => {
    const db = await openDatabase({});
    try {
      const applied = await migrate(db);
      expect(applied).toEqual(readMigrations().map((m) => m.name));
      // the wasm schema engine compares the migrated database with the schema: no statement is missing
      expect(await diffDatabaseToSchema(db.pglite)).toBe("");
      // and the comparison is real: a drifted database is caught
      await db.execScript(`ALTER TABLE "events" ADD COLUMN "drift" int`);
      expect(await diffDatabaseToSchema(db.pglite)).toContain("drift");
    } finally {
      await db.close();
    }
  });

  it("applies each migration once and refuses a migration edited after it was applied", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-migrations-"));
    cpSync(migrationsDir, dir, { recursive: true });
    const pgdb = testDb === "postgres" ? await freshPostgresDatabase() : undefined;
    const db = await openDatabase({ databaseUrl: pgdb?.url });
    try {
      expect((await migrate(db, readMigrations(dir))).length).toBeGreaterThan(0);
      expect(await migrate(db, readMigrations(dir))).toEqual([]);
      const first = readMigrations(dir)[0]!;
      writeFileSync(join(dir, first.name, "migration.sql"), first.sql + "\n-- edited\n");
      await expect(migrate(db, readMigrations(dir))).rejects.toThrow(/changed after it was applied/);
      mkdirSync(join(dir, "99999999999999_later"));
      writeFileSync(join(dir, "99999999999999_later", "migration.sql"), 'CREATE TABLE "later" (id int);');
      writeFileSync(join(dir, first.name, "migration.sql"), first.sql);
      expect(await migrate(db, readMigrations(dir))).toEqual(["99999999999999_later"]);
    } finally {
      await db.close();
      await pgdb?.drop();
    }
  });
});
