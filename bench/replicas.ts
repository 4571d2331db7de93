// npm run bench:replicas (issue 32): introspection and a user search with the primary alone and with one streaming
// replica beside it, in the same run on the same database; the share of the reads that may go to a replica that
// the replica served (goal >= 90 %); and the time from a primary's restart (an immediate shutdown, crash recovery at
// start) to the first successful write (goal <= 5 s after PostgreSQL accepts connections). The primary and the
// replica are Debian's PostgreSQL, made here (pg_basebackup), on this machine: the replica shares the cores, so
// throughput is not what a replica on its own machine adds; the share and the restart are the goals.
// BENCH_SECONDS sets each load's length, BENCH_WORKERS the server's SVC_WORKERS, BENCH_USERS the users seeded.
import { readFileSync } from "node:fs";
import { startPrivatePostgres, startReplica } from "../test/support/private-postgres.js";
import { httpLoad, startProcess, type Result } from "./load.js";
import { introspectionFixture } from "./oidc.js";
import { benchWorkers, startBenchServer } from "./server.js";

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const primary = await startPrivatePostgres();
const replica = await startReplica(primary);
const listening = /listening on (http:\/\/\S+)/;
const stops: (() => unknown)[] = [() => replica.remove(), () => primary.remove()];

/** svc_db_reads_total of a metrics text by node (summed over workers and reasons). */
function readsByNode(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    const m = /^svc_db_reads_total\{[^}]*node="([^"]+)"[^}]*\} (\S+)$/.exec(line);
    if (m) out.set(m[1]!, (out.get(m[1]!) ?? 0) + Number(m[2]));
  }
  return out;
}

const row = (r: Result) => `${r.name.padEnd(44)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms  errors ${r.errors}`;

try {
  const server = await startBenchServer({
    workers: benchWorkers(),
    databaseUrl: primary.url.replace(/\/postgres$/, "/svc_bench"),
    users: Number(process.env.BENCH_USERS ?? 10_000),
    targets: 0,
  });
  stops.unshift(() => server.stop());
  const fixture = await introspectionFixture(server.url, server.pat);
  const loads = (url: string) => ({
    introspection: {
      url: `${url}/oauth/v2/introspect`,
      method: "POST" as const,
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: fixture.introspect.authorization },
      body: fixture.introspect.body,
      duration: seconds,
    },
    search: {
      url: `${url}/resources/v3alpha/users/_search`,
      method: "POST" as const,
      headers: { authorization: `Bearer ${server.pat}`, "content-type": "application/json" },
      body: JSON.stringify({ query: { limit: 20 } }),
      duration: seconds,
    },
  });

  const alone = loads(server.url);
  const results: Result[] = [await httpLoad("introspection, primary alone", alone.introspection), await httpLoad("SearchUsers, primary alone", alone.search)];

  // The same database served by a second server with the replica; the first one idles meanwhile.
  const replicaUrl = replica.url.replace(/\/postgres$/, "/svc_bench");
  const withReplica = await startProcess(["src/main.ts"], { ...server.env, SVC_DATABASE_REPLICA_URLS: replicaUrl }, listening);
  stops.unshift(() => withReplica.child.kill("SIGTERM"));
  for (let i = 0; i < 100; i++) {
    const ready = await (await fetch(`${withReplica.url}/readyz`)).json();
    if (ready.replicas?.[0]?.usable) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const metrics = async () => readsByNode(await (await fetch(`${withReplica.url}/metrics`)).text());
  const before = await metrics();
  const beside = loads(withReplica.url);
  results.push(await httpLoad("introspection, with a replica", beside.introspection), await httpLoad("SearchUsers, with a replica", beside.search));
  const after = await metrics();
  const delta = (node: string) => (after.get(node) ?? 0) - (before.get(node) ?? 0);
  const onReplica = delta("replica-1");
  const onPrimary = delta("primary");

  // Restart: an immediate shutdown (no checkpoint: crash recovery at start), then the first write that succeeds.
  const write = async () => {
    try {
      const r = await fetch(`${server.url}/settings/v3alpha/languages`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${server.pat}`, "content-type": "application/json" },
        body: JSON.stringify({ defaultLanguage: { key: Math.random() < 0.5 ? "de" : "fr" } }),
      });
      await r.arrayBuffer();
      return r.status === 200;
    } catch {
      return false;
    }
  };
  primary.stop("immediate");
  primary.start();
  const accepting = performance.now();
  let firstWriteMs = Number.NaN;
  while (performance.now() - accepting < 30_000) {
    if (await write()) {
      firstWriteMs = performance.now() - accepting;
      break;
    }
    await new Promise((r) => setTimeout(r, 10));
  }

  console.log(
    `\nRead replicas (issue 32): ${server.users} users, ${server.workers} worker(s), ${seconds} s per load, PostgreSQL ${readFileSync(`${replica.dataDir}/PG_VERSION`, "utf8").trim()} primary and replica on this machine\n`,
  );
  for (const r of results) console.log(row(r));
  const [ia, sa, ib, sb] = results;
  console.log(`\nintrospection with a replica / primary alone: ${(ib!.rps / ia!.rps).toFixed(2)}`);
  console.log(`SearchUsers with a replica / primary alone:   ${(sb!.rps / sa!.rps).toFixed(2)}`);
  const share = onReplica / Math.max(1, onReplica + onPrimary);
  console.log(`reads that may go to a replica served by it: ${(share * 100).toFixed(1)} % (${onReplica} of ${onReplica + onPrimary}; goal >= 90 %)`);
  console.log(
    `primary restarted (immediate shutdown) -> first successful write: ${firstWriteMs.toFixed(0)} ms after it accepted connections (goal <= 5000 ms)`,
  );
} finally {
  for (const stop of stops) await stop();
}
