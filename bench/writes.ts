// Writes against PostgreSQL's own ceiling in the same run: pgbench runs the transactions our commands run
// (without Node, Prisma or HTTP), on copies of our tables on the same database, and our REST writes are
// compared to it as ratios. Needs the database the server uses (BENCH_DATABASE_URL) and pgbench on PATH.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { httpLoad, type Result } from "./load.js";

/**
 * The transaction of CreateTarget as the server sends it: the event (with its sequence and the NOTIFY) and the
 * projection row, whose unique index checks the name (no SELECT of the name since a8edf98). pgbench sends BEGIN in
 * a round trip of its own, where the server sends it with the event: pgbench makes one round trip more.
 */
const createTargetShape = `
\\set n random(1, 2000000000)
BEGIN;
INSERT INTO bench_events (instance_id, aggregate_type, aggregate_id, sequence, type, payload, creator, resource_owner)
  SELECT 'bench', 'target', :client_id || '-' || :n,
    COALESCE((SELECT MAX(sequence) FROM bench_events WHERE instance_id = 'bench' AND aggregate_type = 'target' AND aggregate_id = :client_id || '-' || :n), 0) + 1,
    'action.target.added', '{"name": "t", "url": "https://example.com/h", "timeoutMs": 5000}', 'bench', 'bench'
  RETURNING position, sequence, created_at, pg_notify('bench', 'x');
INSERT INTO bench_targets (id, instance_id, name, target_type, url, timeout_ms, is_async, interrupt_on_error, signing_key, sequence, created_at, change_date)
  VALUES (:client_id || '-' || :n, 'bench', 't-' || :client_id || '-' || :n, 'rest_webhook', 'https://example.com/h', 5000, false, false, 'k', 1, now(), now());
COMMIT;
`;

/** Everyone upserting the same row: the floor of any write to one aggregate. */
const upsertOneRow = `
\\set v random(1, 1000000)
INSERT INTO bench_one (id, v) VALUES (1, :v) ON CONFLICT (id) DO UPDATE SET v = excluded.v;
`;

function pgbench(name: string, databaseUrl: string, script: string, seconds: number): Result {
  const dir = mkdtempSync(join(tmpdir(), "svc-pgbench-"));
  try {
    const file = join(dir, "script.sql");
    writeFileSync(file, script);
    const r = spawnSync("pgbench", ["-n", "-c", "50", "-j", "2", "-T", String(seconds), "-f", file, databaseUrl], { encoding: "utf8" });
    const tps = /tps = ([\d.]+)/.exec(r.stdout);
    if (r.status !== 0 || !tps) throw new Error(`pgbench failed: ${r.stderr || r.stdout}`);
    const latency = Number(/latency average = ([\d.]+) ms/.exec(r.stdout)?.[1] ?? 0);
    const failed = Number(/number of failed transactions: (\d+)/.exec(r.stdout)?.[1] ?? 0);
    return { name, rps: Number(tps[1]), p50: latency, p99: Number.NaN, errors: failed };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function pgbenchAvailable(): boolean {
  return spawnSync("pgbench", ["--version"]).status === 0;
}

/** Copies of our tables (same columns, defaults and indexes) for pgbench, so that its rows never reach the server's log. */
async function prepare(databaseUrl: string) {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    await c.query(`DROP TABLE IF EXISTS bench_events, bench_targets, bench_one;
      CREATE TABLE bench_events (LIKE events INCLUDING ALL);
      CREATE TABLE bench_targets (LIKE targets INCLUDING ALL);
      CREATE TABLE bench_one (id int PRIMARY KEY, v int);
      INSERT INTO bench_one VALUES (1, 0);`);
  } finally {
    await c.end();
  }
}

export interface WriteBenchArgs {
  api: (path: string) => string;
  headers: Record<string, string>;
  seconds: number;
  /** The server's database: pgbench runs there. Without it, only our figures are printed. */
  databaseUrl: string | undefined;
  languageKeys: string[];
}

/** `goals`: CreateTarget / pgbench of its transaction and SetLanguages / pgbench of a one-row upsert (with pgbench only). */
export async function writesBench(a: WriteBenchArgs): Promise<{ results: Result[]; ratios: string[]; goals?: { createTarget: number; setLanguages: number } }> {
  const results: Result[] = [];
  let created = 0;
  const createTargets = (name: string, seconds: number) =>
    httpLoad(name, {
      url: a.api("/resources/v3alpha/targets"),
      method: "POST",
      headers: a.headers,
      requests: [
        {
          method: "POST",
          setupRequest: (req) => ({
            ...req,
            body: JSON.stringify({ name: `bench-${process.pid}-${created++}`, restWebhook: { url: "https://example.com/h" }, timeout: "5s" }),
          }),
        },
      ],
      duration: seconds,
    });
  // A long-running server has run its write path often; V8 optimises code run once per write only after
  // thousands of writes (see the OIDC section), so a first run warms it and is not counted.
  const warmSeconds = Math.min(a.seconds, 5);
  const warm = await createTargets("CreateTarget REST, warm-up", warmSeconds);
  const createTarget = await createTargets("CreateTarget REST, distinct aggregates", a.seconds);
  results.push(createTarget);
  let next = 0;
  const setLanguages = await httpLoad("SetLanguages REST, one aggregate", {
    url: a.api("/settings/v3alpha/languages"),
    method: "PATCH",
    headers: a.headers,
    requests: [
      {
        method: "PATCH",
        setupRequest: (req) => ({ ...req, body: JSON.stringify({ defaultLanguage: { key: a.languageKeys[next++ % a.languageKeys.length] } }) }),
      },
    ],
    duration: a.seconds,
  });
  results.push(setLanguages);
  const ratios: string[] = [];
  if (!a.databaseUrl || !pgbenchAvailable()) {
    ratios.push("writes: pgbench ceilings skipped (set BENCH_DATABASE_URL to a PostgreSQL server and install pgbench)");
    return { results, ratios };
  }
  await prepare(a.databaseUrl);
  const shape = pgbench("pgbench: CreateTarget's transaction, no global lock", a.databaseUrl, createTargetShape, a.seconds);
  const one = pgbench("pgbench: upsert of one row", a.databaseUrl, upsertOneRow, a.seconds);
  results.push(shape, one);
  ratios.push(
    `CreateTarget / pgbench same transaction = ${(createTarget.rps / shape.rps).toFixed(3)} (goal >= 0.5; after a warm-up of ${Math.round(warm.rps * warmSeconds)} writes at ${Math.round(warm.rps)}/s)`,
  );
  ratios.push(`SetLanguages / pgbench upsert of one row = ${(setLanguages.rps / one.rps).toFixed(3)} (goal >= 0.5)`);
  return { results, ratios, goals: { createTarget: createTarget.rps / shape.rps, setLanguages: setLanguages.rps / one.rps } };
}

/** Runs `write` about `perSecond` times a second until stopped; resolves with how many were sent and failed. */
export function pacedWrites(perSecond: number, write: () => Promise<boolean>) {
  let sent = 0;
  let failed = 0;
  const timer = setInterval(() => {
    sent++;
    write().then(
      (ok) => void (ok || failed++),
      () => void failed++,
    );
  }, 1000 / perSecond);
  return {
    stop: () => {
      clearInterval(timer);
      return { sent, failed };
    },
  };
}
