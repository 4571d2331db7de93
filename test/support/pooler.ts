import { startPgBouncer } from "./pgbouncer.js";

/**
 * With TEST_DATABASE_POOLER=pgbouncer (and TEST_DATABASE_URL): the PostgreSQL project's test servers reach their
 * databases through Debian's PgBouncer in transaction mode, started here in front of TEST_DATABASE_URL's server, as
 * an operator runs them (issue 32): DATABASE_URL the pooler, SVC_DATABASE_DIRECT_URL the server itself
 * (`freshPostgresDatabase`). Databases are made, copied and dropped on the server itself: PgBouncer keeps server
 * sessions on a database, which a template copy refuses.
 */
export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  const pooler = process.env.TEST_DATABASE_POOLER;
  if (!pooler || !process.env.TEST_DATABASE_URL) return undefined;
  if (pooler !== "pgbouncer") throw new Error(`TEST_DATABASE_POOLER: only "pgbouncer" is known, got "${pooler}"`);
  const server = new URL(process.env.TEST_DATABASE_URL);
  if (server.hostname !== "127.0.0.1" && server.hostname !== "localhost") throw new Error("TEST_DATABASE_POOLER needs TEST_DATABASE_URL on this machine");
  const bouncer = await startPgBouncer(Number(server.port || 5432));
  // the vitest workers are started after this and inherit it
  process.env.TEST_DATABASE_POOLER_URL = bouncer.url("postgres");
  return () => bouncer.stop();
}
