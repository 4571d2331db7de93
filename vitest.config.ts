import { defineConfig } from "vitest/config";

// The whole suite runs on embedded PGlite, and again on PostgreSQL when TEST_DATABASE_URL is set.
const databases = ["pglite", ...(process.env.TEST_DATABASE_URL ? ["postgres"] : [])];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: databases.map((db) => ({
      extends: true,
      test: { name: db, include: ["test/**/*.test.ts"], env: { SVC_TEST_DB: db } },
    })),
  },
});
