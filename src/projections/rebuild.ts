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

/**
 * What some tables hold that no event gives back, and a rebuild therefore keeps: the OIDC provider's pending
 * authorization requests (rows written at authorize without an event, security review #22; the events of a
 * request begin at its callback) and a browser session's last use (`used_at`, written on every use without an
 * event: command/sessions.ts). `rows`: a condition for rows kept as they are; `columns`: columns restored by key
 * after the replay.
 */
const withoutEvents: Partial<Record<ProjectionTable, { rows?: string; columns?: { key: string; names: string[] } }>> = {
  authRequest: { rows: "state = 'pending'" },
  loginSession: { columns: { key: "id", names: ["used_at"] } },
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
  return retryOnLockConflict(() => replay(db, chosen));
}

/** PostgreSQL's codes for a deadlock (40P01) and a lock not granted within lock_timeout (55P03). */
const isLockConflict = (err: unknown) => ["40P01", "55P03"].includes((err as { code?: string })?.code ?? "");

/**
 * A rebuild locks several tables that commands write in their own order, so it may deadlock with one (the
 * rebuild, waiting first, is the one PostgreSQL aborts) or wait long behind one: it then gives way, and tries
 * again after a pause, up to LOCK_ATTEMPTS times.
 */
async function retryOnLockConflict<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (!isLockConflict(err) || attempt >= LOCK_ATTEMPTS) throw err;
      await new Promise((r) => setTimeout(r, 50 * attempt + Math.random() * 100));
    }
  }
}

const LOCK_ATTEMPTS = 20;

function replay(db: Database, chosen: readonly (typeof allProjections)[number][]): Promise<{ tables: Rebuilt[]; events: number }> {
  return db.transaction(
    async (sql) => {
      // Each lock waits 2 s at most: writers of these tables wait for the whole rebuild, so it does not also queue.
      await sql.query("SET LOCAL lock_timeout = '2s'");
      await sql.query(`LOCK TABLE ${chosen.map((p) => quoted(p.table)).join(", ")} IN EXCLUSIVE MODE`);
      await sql.query("SET LOCAL lock_timeout = 0");
      for (const p of chosen) {
        const kept = withoutEvents[p.table];
        if (kept?.columns) {
          const { key, names } = kept.columns;
          await sql.query(`CREATE TEMP TABLE "kept_${p.table}" ON COMMIT DROP AS SELECT ${[key, ...names].join(", ")} FROM ${quoted(p.table)}`);
        }
        await sql.query(`DELETE FROM ${quoted(p.table)}${kept?.rows ? ` WHERE NOT (${kept.rows})` : ""}`);
      }

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

      for (const p of chosen) {
        const columns = withoutEvents[p.table]?.columns;
        if (!columns) continue;
        const set = columns.names.map((n) => `${n} = k.${n}`).join(", ");
        await sql.query(`UPDATE ${quoted(p.table)} t SET ${set} FROM "kept_${p.table}" k WHERE t.${columns.key} = k.${columns.key}`);
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
    },
    { maintenance: true },
  );
}

/**
 * The projections whose table was written by an older version of their handlers, or by none (a projection
 * added since). The versions began at 1 with every table then existing: a database without any record gets a
 * record of version 1 for each, and so rebuilds nothing.
 */
export async function outdatedProjections(db: Database): Promise<ProjectionTable[]> {
  await db.pool.query(
    `INSERT INTO projection_states (name, version, rebuilt_at, position)
     SELECT name, 1, now(), 0 FROM unnest($1::text[]) AS name WHERE NOT EXISTS (SELECT 1 FROM projection_states)
     ON CONFLICT (name) DO NOTHING`,
    [allProjections.map((p) => p.table)],
  );
  const { rows } = await db.pool.query<{ name: string; version: number }>("SELECT name, version FROM projection_states");
  const recorded = new Map(rows.map((r) => [r.name, r.version]));
  return allProjections.filter((p) => p.version > (recorded.get(p.table) ?? 0)).map((p) => p.table);
}
