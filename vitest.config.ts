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
    // A worker runs its files one after another in one module graph instead of importing the whole server
    // again for each (about a second of import per file, 480 files): the files start and close their own
    // servers and keep no state in modules (docs/decisions.md "Test run time").
    isolate: false,
    // TEST_DATABASE_POOLER=pgbouncer: the PostgreSQL project through PgBouncer in transaction mode (pooler.ts)
    globalSetup: ["test/support/global-teardown.ts", "test/support/postgres-template.ts", "test/support/pooler.ts"],
    hookTimeout: 60_000,
    projects: [
      ...databases.map((db) => ({
        extends: true,
        // SVC_WORKERS=1: the processes the tests start are single unless a test asks for workers
        // (test/platform/workers.test.ts, and the log's test, which starts the default): two cores shared by three
        // test files have none to spare for a supervisor and two workers in every server a test starts.
        test: { name: db, include: ["test/**/*.test.ts"], exclude: ["test/**/*.timing.test.ts"], env: { SVC_TEST_DB: db, SVC_WORKERS: "1" } },
      })),
      // Assertions on elapsed time (an answer no faster for unknown names, a target cut at its timeout): run
      // alone, one file at a time, after the others (package.json's test script), so that a loaded machine does
      // not decide them. `vitest run --project timing` runs them by themselves.
      {
        extends: true,
        test: { name: "timing", include: ["test/**/*.timing.test.ts"], env: { SVC_TEST_DB: "embedded", SVC_WORKERS: "1" }, fileParallelism: false },
      },
    ],
  },
});
