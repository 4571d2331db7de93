/**
 * Rebuilding projection tables from the event log, on a running system (`svc projections rebuild [table ...]`,
 * and at start for a projection whose version is newer than the one that wrote its table).
 *
 * One transaction: it locks the tables against writes (EXCLUSIVE: reads go on, and see the old rows until the
 * commit), empties them, replays every event their handlers take in position order (handlers in the order of
 * `allProjections`), records the version, and commits. A command that appends meanwhile waits at its
 * projection's first write for the lock and then applies its event to the rebuilt table, or, if it wrote
 * before the lock was granted, committed first and is replayed: no write is lost either way. Tables that a
 * projection's handlers read are rebuilt with it (`rebuildSet`), so that they read them as they were.
 */
import { EVENTS_CHANNEL, eventsOfTypes, type Reducer } from "../eventstore/eventstore.js";
import type { Database } from "../storage/database.js";
import { instanceCascade } from "./cascade.js";
import { allProjections, type ProjectionTable, rebuildSet } from "./index.js";

/** Each projection's table as PostgreSQL names it (schema.prisma's @@map; cache-sources.test.ts checks this). */
export const sqlTables: Record<ProjectionTable, string> = {
  instance: "instances",
  instanceDomain: "instance_domains",
  org: "orgs",
  orgDomain: "org_domains",
  user: "users",
  machineKey: "machine_keys",
  membership: "memberships",
  personalAccessToken: "personal_access_tokens",
  setting: "settings",
  target: "targets",
  execution: "executions",
  idp: "idps",
  idpPolicy: "idp_policies",
  loginSession: "login_sessions",
  project: "projects",
  projectRole: "project_roles",
  application: "applications",
  applicationKey: "application_keys",
  userGrant: "user_grants",
  signingKey: "signing_keys",
  authRequest: "auth_requests",
  refreshToken: "refresh_tokens",
  revokedToken: "revoked_tokens",
  temporaryLockout: "temporary_lockouts",
  notificationProvider: "notification_providers",
  userTotp: "user_totps",
  userWebauthnKey: "user_webauthn_keys",
  userMfaInitSkip: "user_mfa_init_skips",
  userCode: "user_codes",
  userOtpChannel: "user_otp_channels",
  userIdpLink: "user_idp_links",
  brandingAsset: "branding_assets",
  userMetadata: "user_metadata",
  userSchema: "user_schemas",
  projectGrant: "project_grants",
};

/** What a rebuild did to one table. */
export interface Rebuilt {
  table: ProjectionTable;
  version: number;
  rows: number;
}

const BATCH = 1000;
const quoted = (table: ProjectionTable) => `"${sqlTables[table]}"`;

/**
 * Rebuilds `tables` (all projections when empty) and those they read, in one transaction. Returns each
 * rebuilt table's row count and the number of events replayed.
 */
export async function rebuildProjections(db: Database, tables: readonly ProjectionTable[] = []): Promise<{ tables: Rebuilt[]; events: number }> {
  const chosen = tables.length ? rebuildSet(tables) : [...allProjections];
  return db.transaction(async (sql) => {
    await sql.query(`LOCK TABLE ${chosen.map((p) => quoted(p.table)).join(", ")} IN EXCLUSIVE MODE`);
    for (const p of chosen) await sql.query(`DELETE FROM ${quoted(p.table)}`);

    // An instance's removal empties every table of its rows (cascade.ts); here, only the chosen tables'.
    const { rows: withInstance } = await sql.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'instance_id' AND table_name = ANY($1::text[])",
      [chosen.map((p) => sqlTables[p.table])],
    );
    const cascaded = withInstance.map((r) => `"${r.table_name}"`);
    const handlers = new Map<string, Reducer[]>();
    const add = (type: string, reduce: Reducer) => handlers.set(type, [...(handlers.get(type) ?? []), reduce]);
    for (const h of instanceCascade.handlers) {
      add(h.event.type, async (_tx, e, s) => {
        for (const t of cascaded) await s.query(`DELETE FROM ${t} WHERE instance_id = $1`, [e.aggregateId]);
      });
    }
    for (const p of chosen) for (const h of p.handlers) add(h.event.type, h.reduce);

    let after = 0n;
    let events = 0;
    for (;;) {
      const batch = await eventsOfTypes(sql, [...handlers.keys()], after, BATCH);
      for (const e of batch) for (const reduce of handlers.get(e.type)!) await reduce(db.writer, e, sql);
      events += batch.length;
      if (batch.length < BATCH) break;
      after = batch.at(-1)!.position;
    }

    const out: Rebuilt[] = [];
    for (const p of chosen) {
      const { rows } = await sql.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${quoted(p.table)}`);
      out.push({ table: p.table, version: p.version, rows: Number(rows[0]!.n) });
      await sql.query(
        `INSERT INTO projection_states (name, version, rebuilt_at, position) VALUES ($1, $2, now(), (SELECT coalesce(max(position), 0) FROM events))
         ON CONFLICT (name) DO UPDATE SET version = EXCLUDED.version, rebuilt_at = EXCLUDED.rebuilt_at, position = EXCLUDED.position`,
        [p.table, p.version],
      );
    }
    // Every process's read caches may hold rows that changed: "*" drops them all, at the commit.
    await sql.query("SELECT pg_notify($1, '*')", [EVENTS_CHANNEL]);
    return { tables: out, events };
  });
}

/**
 * The projections whose version is newer than the one recorded for their table. A table without a record was
 * written by version 1 (the versions began with it), so a new database rebuilds nothing.
 */
export async function outdatedProjections(db: Database): Promise<ProjectionTable[]> {
  const { rows } = await db.pool.query<{ name: string; version: number }>("SELECT name, version FROM projection_states");
  const recorded = new Map(rows.map((r) => [r.name, r.version]));
  return allProjections.filter((p) => p.version > (recorded.get(p.table) ?? 1)).map((p) => p.table);
}
