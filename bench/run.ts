// npm run bench: throughput and latency percentiles of the API against the same run's ceiling (a bare
// Fastify route returning the same JSON). Server and ceiling run in their own processes; figures are
// compared as ratios because absolute numbers drift between runs. BENCH_SECONDS sets each run's length.
// BENCH_DATABASE_URL (a PostgreSQL server; its database is dropped and created again) runs the server there
// instead of on the embedded database, and lets pgbench measure the same transactions as a ceiling.
// BENCH_WORKERS sets the server's SVC_WORKERS (default 1); BENCH_USERS the users seeded (default 100,000).
// The goals of issue 31 at 1 and 2 workers side by side: bench/goals.ts.
import { create, toBinary } from "@bufbuild/protobuf";
import { ResolveLanguageSettingsRequestSchema, SetLanguageSettingsRequestSchema } from "../gen/svc/settings/language/v3alpha/language_service_pb.js";
import { grpcLoad, httpLoad, type Result } from "./load.js";
import { metricsBench } from "./metrics.js";
import { oidcBench } from "./oidc.js";
import { passwordBench } from "./passwords.js";
import { protocolsBench } from "./protocols.js";
import { secondFactorBench } from "./second-factors.js";
import { searchBench } from "./search.js";
import { jsonWriterBench, serializationBench } from "./serialization.js";
import { benchWorkers, startBenchServer } from "./server.js";
import { transactionsBench } from "./transactions.js";
import { writesBench } from "./writes.js";

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const workers = benchWorkers();
// BENCH_CPU_PROF=<dir>: the measured server writes a V8 CPU profile there when the run ends (NODE_OPTIONS may not carry it).
const profile = process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
const server = await startBenchServer({ workers, databaseUrl: process.env.BENCH_DATABASE_URL, nodeArgs: profile });
const { pat, firstOrg, databaseUrl, ceiling } = server;
const targetsStored = server.targets;
const auth = { authorization: `Bearer ${pat}` };
const json = { ...auth, "content-type": "application/json" };
const target = new URL(server.url).host;
const svc = "/svc.settings.language.v3alpha.LanguageSettingsService";
// Consecutive writes cycle through the supported languages, so (nearly) every write is a real change.
const keys = ["de", "fr", "it", "es", "ja", "pl", "pt", "ru", "zh", "en"];
let next = 0;

// BENCH_SECTIONS picks parts of the run (default all): platform, protocols, writes, actions, idps, users, oidc, metrics, search.
const sections = new Set((process.env.BENCH_SECTIONS ?? "platform,protocols,writes,actions,idps,users,oidc,metrics,search").split(","));
const ratios: string[] = [];
const results: Result[] = [];
const api = (path: string) => `${server.url}${path}`;
try {
  const ceil = await httpLoad("ceiling: bare Fastify GET, same JSON", { url: `${ceiling.url}/settings/v3alpha/languages`, duration: seconds });
  results.push(ceil);

  // Language settings (issue 2); the same call is the base line of the webhook figure.
  const resolveRest = await httpLoad("ResolveLanguages REST", { url: api("/settings/v3alpha/languages"), headers: auth, duration: seconds });
  results.push(resolveRest);
  if (sections.has("platform")) {
    const resolveReq = Buffer.from(toBinary(ResolveLanguageSettingsRequestSchema, create(ResolveLanguageSettingsRequestSchema, {})));
    results.push(await grpcLoad("ResolveLanguages gRPC", target, `${svc}/ResolveLanguages`, () => resolveReq, pat, seconds));
    const setReqs = keys.map((key) =>
      Buffer.from(toBinary(SetLanguageSettingsRequestSchema, create(SetLanguageSettingsRequestSchema, { settings: { defaultLanguage: { key } } }))),
    );
    results.push(await grpcLoad("SetLanguages gRPC (a write each)", target, `${svc}/SetLanguages`, () => setReqs[next++ % setReqs.length]!, pat, seconds));
  }

  if (sections.has("protocols")) {
    // Server CPU per call by protocol, with a client that does not compete for the cores (issue 12).
    const byProtocol = protocolsBench({ url: server.url, pid: server.pid, pat, seconds });
    results.push(...byProtocol.results);
    ratios.push(...byProtocol.ratios);
  }

  // Writes next to pgbench running the same transactions on the same database (issue 12)
  if (sections.has("writes")) {
    const w = await writesBench({ api, headers: json, seconds, databaseUrl, languageKeys: keys });
    results.push(...w.results);
    ratios.push(...w.ratios);
    // Why writes avoid Prisma's interactive transactions: the same transaction three ways (bench/transactions.ts)
    if (databaseUrl) ratios.push(...(await transactionsBench(databaseUrl)).lines);
  }

  // Targets with 10,000 stored (issue 3)
  if (sections.has("actions")) {
    results.push(
      await httpLoad(`SearchTargets REST, 100 of ${targetsStored}`, {
        url: api("/resources/v3alpha/targets/_search"),
        method: "POST",
        headers: json,
        body: JSON.stringify({ query: { limit: 100 }, sorting_column: "TARGET_FIELD_NAME_NAME" }),
        duration: seconds,
      }),
    );
    results.push(
      await httpLoad(`SearchTargets REST, name contains`, {
        url: api("/resources/v3alpha/targets/_search"),
        method: "POST",
        headers: json,
        body: JSON.stringify([{ name: { name: "seed-99", method: "TEXT_FILTER_METHOD_CONTAINS" } }]),
        duration: seconds,
      }),
    );
  }

  // Identity providers: 10,000 over 100 organisations (issue 4)
  if (sections.has("idps")) {
    const idpSearch = (ctx: string) => ({
      url: api(`/resources/v3alpha/idps/_search${ctx}`),
      method: "POST" as const,
      headers: json,
      body: JSON.stringify({ query: { limit: 100 }, sorting_column: "IDP_FIELD_NAME_NAME" }),
      duration: seconds,
    });
    results.push(await httpLoad("SearchIDPs REST, organisation context", idpSearch(`?ctx.org_id=${firstOrg}`)));
    results.push(await httpLoad("SearchIDPs REST, instance context", idpSearch("")));
  }

  // Users: 100,000 over 100 organisations (issue 5), and the deliberate cost of a password check
  if (sections.has("users")) {
    const userSearch = (body: object) => ({
      url: api("/resources/v3alpha/users/_search"),
      method: "POST" as const,
      headers: json,
      body: JSON.stringify(body),
      duration: seconds,
    });
    results.push(
      await httpLoad("SearchUsers REST, 100 of 100,000 by username", userSearch({ query: { limit: 100 }, sortingColumn: "USER_FIELD_NAME_USERNAME" })),
    );
    results.push(
      await httpLoad(
        "SearchUsers REST, username starts with",
        userSearch({ filters: [{ username: { username: "user-4242", method: "TEXT_FILTER_METHOD_STARTS_WITH" } }] }),
      ),
    );
    results.push(
      await httpLoad("SearchUsers REST, organisation context", {
        ...userSearch({ query: { limit: 100 } }),
        url: api(`/resources/v3alpha/users/_search?ctx.org_id=${firstOrg}`),
      }),
    );
    const password = await passwordBench(seconds);
    results.push(password);
    const secondFactors = await secondFactorBench(seconds, password);
    results.push(...secondFactors.results);
    ratios.push(...secondFactors.lines);
  }

  // Every search filter and sort column of users and targets, 10 connections, with the server's CPU per page (issue 12)
  if (sections.has("search")) {
    const perCase = Number(process.env.BENCH_SEARCH_SECONDS ?? Math.min(seconds, 3));
    ratios.push(...(await searchBench({ api, headers: json, seconds: perCase, pid: server.pid, org: firstOrg })).lines);
    ratios.push(...serializationBench(), ...jsonWriterBench());
  }

  // OIDC endpoints next to oidc-provider (issue 6)
  if (sections.has("oidc")) {
    const o = await oidcBench(server.url, server.pid, pat, seconds, ceiling.url);
    results.push(...o.results);
    ratios.push(...o.lines);
  }

  // What metrics cost: two servers of their own, metrics on and off (bench/metrics.ts)
  if (sections.has("metrics")) {
    const m = await metricsBench(seconds, workers);
    results.push(...m.results);
    ratios.push(...m.ratios);
  }

  // The latency a webhook execution adds to a call (the webhook answers at once)
  let withHook: Result | undefined;
  if (sections.has("actions")) {
    const t = await (
      await fetch(api("/resources/v3alpha/targets"), {
        method: "POST",
        headers: json,
        body: JSON.stringify({ name: "bench-hook", restWebhook: { url: `${ceiling.url}/hook` }, timeout: "5s" }),
      })
    ).json();
    await fetch(api("/resources/v3alpha/executions"), {
      method: "POST",
      headers: json,
      body: JSON.stringify({ condition: { request: { method: `${svc}/ResolveLanguages` } }, targets: [t.details.id] }),
    });
    withHook = await httpLoad("ResolveLanguages REST + webhook execution", { url: api("/settings/v3alpha/languages"), headers: auth, duration: seconds });
    results.push(withHook);
  }

  const pad = (s: string, n: number) => s.padEnd(n);
  console.log(
    `\n${pad(`benchmark (50 concurrent, ${seconds} s each, ${workers} worker${workers > 1 ? "s" : ""})`, 46)} ${pad("req/s", 9)} ${pad("p50 ms", 8)} ${pad("p99 ms", 8)} ${pad("errors", 7)} vs ceiling`,
  );
  for (const r of results) {
    console.log(
      `${pad(r.name, 46)} ${pad(r.rps.toFixed(0), 9)} ${pad(r.p50.toFixed(2), 8)} ${pad(r.p99.toFixed(2), 8)} ${pad(String(r.errors), 7)} ${(r.rps / ceil.rps).toFixed(3)}`,
    );
  }
  if (withHook) {
    console.log(
      `\nwebhook execution: p50 ${resolveRest.p50} -> ${withHook.p50} ms (x${(withHook.p50 / resolveRest.p50).toFixed(2)}), ` +
        `throughput x${(withHook.rps / resolveRest.rps).toFixed(2)} of the same call without it`,
    );
  }
  const alone = results.find((x) => x.name === "introspection: ours");
  const beside = results.find((x) => x.name.startsWith("introspection, ") && x.name.endsWith("writes/s beside"));
  if (alone && beside) ratios.push(`introspection with writes beside / alone = ${(beside.rps / alone.rps).toFixed(3)} (goal >= 0.9)`);
  const credentials = results.find((x) => x.name === "client_credentials: ours");
  for (const exchange of results.filter((x) => x.name.startsWith("token exchange"))) {
    if (credentials) ratios.push(`${exchange.name.replace(": ours", "")} / client_credentials = ${(exchange.rps / credentials.rps).toFixed(3)} (same run)`);
  }
  if (ratios.length) console.log(`\n${ratios.join("\n")}`);
  // Each of ours against the peer's figure of the same run.
  for (const r of results.filter((x) => x.name.endsWith(": ours"))) {
    const kind = r.name.replace(": ours", "");
    const peer =
      results.find((x) => x.name.startsWith(kind) && x.name.endsWith("oidc-provider")) ??
      results.find((x) => x.name.endsWith("oidc-provider") && x.name.startsWith(kind.split(" ")[0]!));
    const signing = results.find((x) => x.name.startsWith("ceiling: bare route signing"));
    if (peer) {
      console.log(
        `${kind}: ours / oidc-provider = x${(r.rps / peer.rps).toFixed(2)} throughput, p50 ${r.p50} vs ${peer.p50} ms` +
          (signing ? `; of the signing ceiling: ours ${(r.rps / signing.rps).toFixed(2)}, oidc-provider ${(peer.rps / signing.rps).toFixed(2)}` : ""),
      );
    }
  }
} finally {
  await server.stop();
}
