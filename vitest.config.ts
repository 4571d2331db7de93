import { defineConfig } from "vitest/config";

// The whole suite runs on the embedded PostgreSQL, and again on a PostgreSQL server when TEST_DATABASE_URL is set.
const databases = ["embedded", ...(process.env.TEST_DATABASE_URL ? ["postgres"] : [])];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    // Three files at a time on CI's two cores (vitest's default there is one): most of a file's time is spent
    // waiting on its servers, databases and browser. Measured on this machine: 660 s for the whole suite on both
    // databases with three, 1,876 s with one (docs/decisions.md "Test run time").
    maxWorkers: 3,
    globalSetup: ["test/support/global-teardown.ts"],
    hookTimeout: 60_000,
    projects: databases.map((db) => ({
      extends: true,
      test: { name: db, include: ["test/**/*.test.ts"], env: { SVC_TEST_DB: db } },
    })),
  },
});
