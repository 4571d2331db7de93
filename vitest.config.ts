import { defineConfig } from "vitest/config";

// The whole suite runs on the embedded PostgreSQL, and again on a PostgreSQL server when TEST_DATABASE_URL is set.
const databases = ["embedded", ...(process.env.TEST_DATABASE_URL ? ["postgres"] : [])];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    globalSetup: ["test/support/global-teardown.ts"],
    hookTimeout: 60_000,
    projects: databases.map((db) => ({
      extends: true,
      test: { name: db, include: ["test/**/*.test.ts"], env: { SVC_TEST_DB: db } },
    })),
  },
});
